"""Adapters that meet other trainers' conventions: TRL's environment_factory (``trl``) and
OpenEnv (``openenv``)."""
