"""DeliveryPlan (VoxReason): plan how to say it from cited evidence. See ``env.py``."""
