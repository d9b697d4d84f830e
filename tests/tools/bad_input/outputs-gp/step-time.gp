name: bad
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, latency: 3 us}
mesh: {shape: [2, 4]}
dtype: bf16
cost_model: dtensor
workload:
  - {name: proj, op: mm, a: [64, 64], b: [64, 64], a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
