"""Case files: reading them (files), their values (model), inputs, and generated cases."""
