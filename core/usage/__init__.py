"""Tokens and cost: one record per model response, read from each agent's logs (`tokens`),
priced from the genai-prices table (`pricing`)."""
