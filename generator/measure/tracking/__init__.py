"""What tracks a step's storages: the tracker that labels each (tracker.py), when each was
born and died (storage_lives.py), the figures that follow (timeline.py), gradient sums made
in place (in_place_sums.py), a model's build on the device (build_trace.py), a sharded
step's DTensors (sharded_tracker.py) and a real CPU run's allocator blocks
(cpu_allocator_blocks.py)."""
