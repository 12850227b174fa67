"""Env families; importing ``hear_gym`` registers their ids with Gymnasium."""
