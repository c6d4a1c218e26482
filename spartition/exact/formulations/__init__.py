"""The CP-SAT formulations of the red-blue pebble game, one module per model."""
