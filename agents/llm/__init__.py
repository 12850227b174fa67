"""Language-model agents: the paper's prompt cards, chat clients, and the agent that joins them."""
