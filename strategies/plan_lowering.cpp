#include "strategies/plan_lowering.hpp"

#include <array>
#include <map>
#include <optional>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "strategies/collective_matmul.hpp"
#include "strategies/plan_lowering_lowerer.hpp"

namespace symmesh::strategies {
namespace plan_lowering_detail {

GroupId Lowerer::group_of(int mesh_dim, int index) {
  auto key = std::make_pair(mesh_dim, index);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  std::vector<int> ranks;
  const auto groups = mesh_.groups(mesh_dim);  // kept alive: range-for over [index] would dangle
  for (int r : groups[index]) ranks.push_back(world(r));
  return groups_[key] = program_.add_group(ranks);
}

LocalTensor Lowerer::new_local(int mesh_rank, const Shape& shape) {
  return {program_.local_alloc(world(mesh_rank), bytes_of(shape)), shape};
}

void Lowerer::copy_box(int mesh_rank, const LocalTensor& src, const Shape& src_origin,
                       const BufferRef& dst, const Shape& dst_shape, const Shape& dst_origin,
                       const Shape& box, const std::string& detail) {
  if (numel(box) == 0 || !held(mesh_rank)) return;
  const Dims3 s = as3(src.shape, 1), so = as3(src_origin, 0);
  const Dims3 t = as3(dst_shape, 1), to = as3(dst_origin, 0);
  const Dims3 b = as3(box, 1);
  const int64_t src_off = ((so[0] * s[1] + so[1]) * s[2] + so[2]) * e_;
  const int64_t dst_off = ((to[0] * t[1] + to[1]) * t[2] + to[2]) * e_;
  CopyWork work;
  work.src = src.ref.slice(src_off, src.ref.size_bytes - src_off);
  work.dst = dst.slice(dst_off, dst.size_bytes - dst_off);
  work.planes = b[0];
  work.rows = b[1];
  work.row_bytes = b[2] * e_;
  work.src_plane_stride_bytes = s[1] * s[2] * e_;
  work.dst_plane_stride_bytes = t[1] * t[2] * e_;
  work.src_stride_bytes = s[2] * e_;
  work.dst_stride_bytes = t[2] * e_;
  program_.copy(world(mesh_rank), stream(mesh_rank), work, label(OpCategory::compute, detail));
}

TensorState Lowerer::initial_state(int input) {
  TensorState state{plan_.problem.inputs[input], {}};
  const Shape& global = state.spec.shape;
  for (int r = 0; r < mesh_.size(); ++r) {
    if (!held(r)) {
      state.local.emplace_back();
      continue;
    }
    const LocalView view = local_view(state.spec, mesh_, r);
    LocalTensor piece = new_local(r, view.shape);
    if (data_ && program_.is_counting()) {
      program_.count_initial_bytes(world(r), piece.ref);
    } else if (data_) {
      // A Partial(sum) input is whole on the ranks at coordinate 0 of its sum dims.
      bool zero = false;
      const auto coords = mesh_.coordinates(r);
      for (int d = 0; d < mesh_.ndim(); ++d)
        zero |= state.spec.placements[d] == Placement::partial(ReduceOp::sum) && coords[d] != 0;
      std::vector<unsigned char> bytes(bytes_of(view.shape), 0);
      if (!zero && !bytes.empty()) {
        const auto& src = options_.global_inputs.at(input);
        const Dims3 g = as3(global, 1), o = as3(view.offset, 0), l = as3(view.shape, 1);
        for (int64_t p = 0; p < l[0]; ++p)
          for (int64_t q = 0; q < l[1]; ++q) {
            const int64_t from = (((o[0] + p) * g[1] + (o[1] + q)) * g[2] + o[2]) * e_;
            const int64_t to = ((p * l[1] + q) * l[2]) * e_;
            std::copy(src.begin() + from, src.begin() + from + l[2] * e_, bytes.begin() + to);
          }
      }
      program_.set_initial_bytes(world(r), piece.ref, std::move(bytes));
    }
    state.local.push_back(piece);
  }
  return state;
}

MatmulWork Lowerer::local_matmul(int mesh_rank, const std::vector<TensorState>& inputs,
                                 const LocalTensor& out) const {
  const OpProblem& problem = plan_.problem;
  MatmulWork work = matmul_work(plan_.local_compute[mesh_rank], dtype_);
  work.work_fraction = problem.work_fraction;
  work.a = inputs[problem.lhs_index()].local[mesh_rank].ref;
  work.b = inputs[problem.rhs_index()].local[mesh_rank].ref;
  work.c = out.ref;
  if (problem.has_bias()) {
    const LocalTensor& b = inputs[problem.bias_index()].local[mesh_rank];
    const Shape out_piece =
        equation_->output_shape(inputs[problem.lhs_index()].local[mesh_rank].shape,
                                inputs[problem.rhs_index()].local[mesh_rank].shape);
    const BiasStrides strides = equation_->bias_strides(b.shape, out_piece);
    work.bias = b.ref;
    work.bias_col_stride = strides.col;
    work.bias_row_stride = strides.row;
    work.bias_batch_stride = strides.batch;
  }
  return work;
}

// A tensor op on this rank's pieces, with where they sit in the global tensors (token ids
// and labels follow the global row; an embedding table piece its first vocabulary row).
TensorOpWork Lowerer::local_tensor_op(int mesh_rank, const std::vector<TensorState>& inputs,
                                      const TensorSpec& out_spec, const LocalTensor& out) const {
  const OpProblem& problem = plan_.problem;
  TensorOpWork w;
  w.op = problem.op;
  w.dtype = dtype_;
  w.attrs = problem.attrs;
  w.inputs = static_cast<int>(inputs.size());
  std::vector<Shape> pieces;
  for (size_t k = 0; k < inputs.size(); ++k) {
    w.in[k] = inputs[k].local[mesh_rank].ref;
    w.in_shapes[k] = inputs[k].local[mesh_rank].shape;
    pieces.push_back(w.in_shapes[k]);
  }
  w.out = out.ref;
  w.out_shape = out.shape;
  const auto first_row = [&](const TensorSpec& spec) -> int64_t {
    return spec.shape.empty() ? 0 : local_view(spec, mesh_, mesh_rank).offset[0];
  };
  const TensorSpec& in0 = inputs[0].spec;
  w.row_offset = first_row(in0);
  switch (problem.op) {
    case OpKind::embedding:
      w.row_offset = first_row(out_spec);
      w.vocab_offset = first_row(in0);
      w.vocab = in0.shape[0];
      break;
    case OpKind::embedding_wgrad:
      w.vocab_offset = first_row(out_spec);
      w.vocab = out_spec.shape[0];
      break;
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_stats:
    case OpKind::cross_entropy_dgrad:
      w.vocab = in0.shape[1];
      w.total_rows = in0.shape[0];
      w.vocab_offset = local_view(in0, mesh_, mesh_rank).offset[1];
      break;
    case OpKind::cross_entropy_loss:
      w.total_rows = in0.shape[0];
      break;
    default:
      break;
  }
  w.cost = tensor_op_cost(w.op, pieces, w.out_shape, w.attrs, dtype_);
  return w;
}

// a's last all-gather and the matmul, overlapped on every group of the gather's mesh dim:
// each rank starts from its own shard of a (the all-gather's input) and writes every row
// block of its output (strategies/collective_matmul.hpp).
void Lowerer::fused_allgather_matmul(const AllGatherFusion& fusion,
                                     const std::vector<TensorState>& inputs,
                                     const std::vector<LocalTensor>& outputs) {
  const int lhs = plan_.problem.lhs_index();
  const auto groups = mesh_.groups(fusion.mesh_dim);
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    GatherMatmulSpec spec;
    spec.group = group_of(fusion.mesh_dim, g);
    spec.leading_is_batch = equation_->leading_is_batch();
    spec.gemm_per_leading =
        equation_->gemm_extent_per_leading(shape_of(inputs[lhs], groups[g][0]));
    spec.chunks = plan_.chosen_candidate().chunks;
    spec.name = options_.name;
    spec.signal = options_.signal + 1;
    if (!any_held(groups[g])) continue;
    for (int r : groups[g]) {
      GatherMatmulMember m;
      m.rank = world(r);
      m.compute_stream = stream(r);
      m.comm_stream = program_.stream(world(r), options_.stream + "-comm");
      if (!held(r)) {  // its shard's rows only: the blocks of the ring
        spec.shard_rows.push_back(shape_of(inputs[lhs], r)[0]);
        spec.members.push_back(m);
        continue;
      }
      const LocalTensor& shard = inputs[lhs].local[r];
      Shape a_row = shard.shape, c_row = outputs[r].shape;
      a_row[0] = c_row[0] = 1;
      spec.shard_rows.push_back(shard.shape[0]);
      spec.a_row_bytes = bytes_of(a_row);
      m.c_row_bytes = bytes_of(c_row);
      if (spec.leading_is_batch) {
        Shape b_row = inputs[plan_.problem.rhs_index()].local[r].shape;
        b_row[0] = 1;
        m.b_row_bytes = bytes_of(b_row);
      }
      m.a_shard = shard.ref;
      m.c = outputs[r].ref;
      m.work = local_matmul(r, inputs, outputs[r]);
      spec.members.push_back(m);
    }
    overlapped_allgather_matmul(program_, spec);
  }
}

// The matmul and the output's reduce-scatter, overlapped on every group of its mesh dim:
// each rank multiplies every row block of its (partial) output and passes accumulators
// around the ring; it ends with its block summed (strategies/collective_matmul.hpp).
std::vector<LocalTensor> Lowerer::fused_matmul_reducescatter(
    const ReduceScatterFusion& fusion, const std::vector<TensorState>& inputs) {
  const OpProblem& problem = plan_.problem;
  const int lhs = problem.lhs_index(), rhs = problem.rhs_index();
  const TensorSpec partial{problem.output_shape(), dtype_,
                           plan_.chosen_candidate().output_placements};
  const TensorSpec target{problem.output_shape(), dtype_, *problem.output_target};
  std::vector<LocalTensor> outputs(mesh_.size());
  const auto groups = mesh_.groups(fusion.mesh_dim);
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    if (!any_held(groups[g])) continue;
    ScatterMatmulSpec spec;
    spec.group = group_of(fusion.mesh_dim, g);
    spec.leading_is_batch = equation_->leading_is_batch();
    spec.gemm_per_leading =
        equation_->gemm_extent_per_leading(shape_of(inputs[lhs], groups[g][0]));
    spec.chunks = plan_.chosen_candidate().chunks;
    spec.name = options_.name;
    spec.signal = options_.signal + 1;
    const Shape whole = local_view(partial, mesh_, groups[g][0]).shape;
    for (int j = 0; j < fusion.group_size; ++j)
      spec.block_rows.push_back(chunk_of(whole[0], fusion.group_size, j).size);
    Shape c_row = whole;
    c_row[0] = 1;
    spec.c_row_bytes = bytes_of(c_row);
    for (int r : groups[g]) {
      ScatterMatmulMember m;
      m.rank = world(r);
      m.compute_stream = stream(r);
      m.comm_stream = program_.stream(world(r), options_.stream + "-comm");
      if (!held(r)) {
        spec.members.push_back(m);
        continue;
      }
      m.a = inputs[lhs].local[r].ref;
      Shape a_row = inputs[lhs].local[r].shape, b_row = inputs[rhs].local[r].shape;
      a_row[0] = b_row[0] = 1;
      m.a_row_bytes = bytes_of(a_row);
      if (spec.leading_is_batch) m.b_row_bytes = bytes_of(b_row);
      m.work = local_matmul(r, inputs, {});
      spec.members.push_back(m);
    }
    const std::vector<BufferRef> blocks = overlapped_matmul_reducescatter(program_, spec);
    for (size_t i = 0; i < groups[g].size(); ++i) {
      const int r = groups[g][i];
      if (held(r)) outputs[r] = {blocks[i], local_view(target, mesh_, r).shape};
    }
  }
  return outputs;
}

LoweredPlan Lowerer::run() {
  const OpProblem& problem = plan_.problem;
  if (options_.first_rank < 0 || options_.first_rank + mesh_.size() > program_.world_size())
    throw InvalidArgument("the mesh's " + std::to_string(mesh_.size()) + " ranks from rank " +
                              std::to_string(options_.first_rank) + " do not fit a world of " +
                              std::to_string(program_.world_size()),
                          "plan lowering");
  if (data_ && !program_.is_counting() && options_.global_inputs.size() != problem.inputs.size())
    throw InvalidArgument("need the bytes of every input", "plan lowering");

  const Candidate& chosen = plan_.chosen_candidate();
  std::optional<AllGatherFusion> fusion;
  std::optional<ReduceScatterFusion> scatter;
  if (chosen.implementation == Implementation::fused_allgather_mm) {
    fusion = allgather_fusion(problem, chosen.input_placements[problem.lhs_index()]);
    if (!fusion)
      throw InvalidArgument("candidate #" + std::to_string(chosen.index) +
                                " has no all-gather of a's leading dim to fuse",
                            "plan lowering");
  } else if (chosen.implementation == Implementation::fused_mm_reducescatter) {
    scatter = reducescatter_fusion(problem, chosen.output_placements);
    if (!scatter)
      throw InvalidArgument("candidate #" + std::to_string(chosen.index) +
                                " has no reduce-scatter of the output's leading dim to fuse",
                            "plan lowering");
  }

  std::vector<TensorState> inputs;
  for (size_t i = 0; i < problem.inputs.size(); ++i)
    inputs.push_back(initial_state(static_cast<int>(i)));
  for (const auto& r : plan_.redistributions)
    for (size_t s = 0; s < r.redistribution.steps.size(); ++s)
      if (!plan_.runs_fused(r, s)) apply_step(inputs[r.input], r.redistribution.steps[s]);

  LoweredPlan lowered;
  lowered.output_placements = chosen.output_placements;
  lowered.output_shape = problem.output_shape();
  if (scatter) {
    lowered.outputs = fused_matmul_reducescatter(*scatter, inputs);
    lowered.output_placements = *problem.output_target;
  } else {
    const TensorSpec out_spec{lowered.output_shape, dtype_, chosen.output_placements};
    for (int r = 0; r < mesh_.size(); ++r)
      lowered.outputs.push_back(held(r) ? new_local(r, local_view(out_spec, mesh_, r).shape)
                                        : LocalTensor{});
    if (problem.is_tensor_op()) {
      for (int r = 0; r < mesh_.size(); ++r)
        if (held(r))
          program_.tensor_op(world(r), stream(r),
                             local_tensor_op(r, inputs, out_spec, lowered.outputs[r]),
                             label(OpCategory::compute, to_string(problem.op)));
    } else if (fusion) {
      fused_allgather_matmul(*fusion, inputs, lowered.outputs);
    } else {
      for (int r = 0; r < mesh_.size(); ++r)
        if (held(r))
          program_.matmul(world(r), stream(r), local_matmul(r, inputs, lowered.outputs[r]),
                          label(OpCategory::compute, to_string(problem.op)));
    }
    // Then to where the output must end up.
    if (plan_.output_redistribution) {
      TensorState out{out_spec, lowered.outputs};
      for (const auto& step : plan_.output_redistribution->redistribution.steps)
        apply_step(out, step);
      lowered.outputs = out.local;
      lowered.output_placements = out.spec.placements;
    }
  }
  if (data_)
    for (int r = 0; r < mesh_.size(); ++r)
      program_.request_output(options_.name, world(r), lowered.outputs[r].ref);
  return lowered;
}

}  // namespace plan_lowering_detail

LoweredPlan lower_plan(const Plan& plan, Program& program, const LoweringOptions& options) {
  return plan_lowering_detail::Lowerer(plan, program, options).run();
}

}  // namespace symmesh::strategies
