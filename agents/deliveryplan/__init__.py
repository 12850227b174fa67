"""DeliveryPlan agents: the VoxReason controls and the training material."""
