"""VoiceGate: act, stay silent or answer from what was heard (VGBench, arXiv:2609.32536)."""
