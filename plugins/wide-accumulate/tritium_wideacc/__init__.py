"""tritium-wide-accumulate: fp16/bf16 reductions and scans accumulate in fp32 (pass ``wide-accumulate``)."""
__version__ = "0.1.0"
