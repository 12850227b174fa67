"""Pieces every environment family shares and none owns."""
