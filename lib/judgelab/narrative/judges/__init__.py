"""LLM judges of narrative paths (notebook 09): the four prompt modes, their schemas, the K-agent
runs through the gateway, agreement among agents and validity against mathematical coherence."""
