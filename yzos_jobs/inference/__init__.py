"""Inference: the LLM profile, the model scheduler, the OpenAI-compatible client, output schema."""
