"""Helpers of tests/fake_model_server.py: the wire formats and the transcript reader."""
