"""Example trainables that Ray's example scripts import from
ray.tune.examples (pb2_example imports pbt_function's), written anew here
with the behaviour Ray's docs describe."""
