"""Codex CLI: its rollouts read into the store (`importer`) and a branch written back as a new
rollout (`writer`)."""
