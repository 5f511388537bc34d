"""The operating-system layer: dispatcher, file systems, page cache, virtual memory."""
