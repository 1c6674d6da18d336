"""Hooks and probes that run inside apps, and the client library they share."""
