"""Talking to a model: the contract types, the LLM profile and scheduler, the OpenAI-compatible
client, the output schema and grammar. Imports nothing from the layers that use it."""
