"""Offline, deterministic implementations of the service (reports and deal requests)."""
