"""Talking to a model: the contract types, the LLM profile and scheduler, the OpenAI-compatible
client and the bounded chat calls, the output schema and grammar. Imports nothing from the layers
that use it."""
