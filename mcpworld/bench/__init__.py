"""`mcpworld bench`: what a trial's cost outside the agent is made of, each figure next to a baseline
measured in the same run (reset, milestone latency, screenshots, gateway overhead, parallel trials,
container start-up)."""
