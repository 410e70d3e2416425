"""Models: the Model contract, offline models, the openai SDK and litellm clients."""
