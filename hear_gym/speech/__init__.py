"""Speech layer: renderers (text + delivery -> waveform), acoustic scenes, prosodic features."""
