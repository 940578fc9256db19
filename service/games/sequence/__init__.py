"""Sequence in the service: its schemas and its terminal replay view."""
