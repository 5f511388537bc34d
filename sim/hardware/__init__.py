"""The hardware layer: cores, strands, pipelines, memory and storage. Knows nothing of Oracle."""
