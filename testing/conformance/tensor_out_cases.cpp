// The Tensor-out collectives over whole worlds (all_gather_into_tensor, reduce_scatter_tensor and
// the _async Tensor forms of reduce, gather, scatter and all_to_all) against reference/, bit for
// bit, with a 2-D output to show that only element counts matter; a wrong output size is an
// InvalidArgument naming the argument.
#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

class TensorOut : public conformance::Test {};

using Elem = std::int64_t;
constexpr std::size_t k = 6;  // per-rank elements

TEST_F(TensorOut, EveryFormMatchesTheReference) {
  for (int n : world_runner().world_sizes) {
    const auto in = inputs<Elem>(n, k, 21);
    const auto nk = static_cast<std::int64_t>(static_cast<std::size_t>(n) * k);
    const auto got = run_world(n, [&] {
      const auto r = static_cast<std::size_t>(dist::get_rank());
      const dist::Tensor mine = dist::Tensor::from(in[r]);
      PerRank<Elem> out;
      dist::Tensor gathered =
          dist::Tensor::zeros({static_cast<std::int64_t>(n), k}, dist::DType::int64);
      dist::all_gather_into_tensor(gathered, mine);
      out.push_back(values_of<Elem>(gathered));
      // reduce_scatter over n × k elements: rank r's input is its own repeated n times.
      std::vector<Elem> wide;
      for (int i = 0; i < n; ++i) wide.insert(wide.end(), in[r].begin(), in[r].end());
      dist::Tensor chunk = dist::Tensor::zeros({static_cast<std::int64_t>(k)}, dist::DType::int64);
      dist::reduce_scatter_tensor_async(chunk, dist::Tensor::from(wide)).wait();
      out.push_back(values_of<Elem>(chunk));
      dist::Tensor reduced = dist::Tensor::from(in[r]);
      dist::reduce_async(reduced, n - 1).wait();
      out.push_back(values_of<Elem>(reduced));
      dist::Tensor at_root = dist::Tensor::zeros({r == 0 ? nk : 0}, dist::DType::int64);
      dist::gather_async(at_root, mine, 0).wait();
      out.push_back(values_of<Elem>(at_root));
      dist::Tensor scattered =
          dist::Tensor::zeros({static_cast<std::int64_t>(k)}, dist::DType::int64);
      dist::scatter_async(scattered, r == 0 ? dist::Tensor::from(wide) : dist::Tensor{}, 0).wait();
      out.push_back(values_of<Elem>(scattered));
      dist::Tensor exchanged = dist::Tensor::zeros({nk}, dist::DType::int64);
      dist::all_to_all_async(exchanged, dist::Tensor::from(wide)).wait();
      out.push_back(values_of<Elem>(exchanged));
      return out;
    });
    const auto rin = to_ref(in);
    PerRank<Elem> wide(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < n; ++i)
        wide[static_cast<std::size_t>(r)].insert(wide[static_cast<std::size_t>(r)].end(),
                                                 in[static_cast<std::size_t>(r)].begin(),
                                                 in[static_cast<std::size_t>(r)].end());
    const std::vector<PerRank<Elem>> want{
        from_ref<Elem>(ref::all_gather(rin)),
        from_ref<Elem>(ref::reduce_scatter(to_ref(wide), ref::Op::sum)),
        from_ref<Elem>(ref::reduce(rin, ref::Op::sum, n - 1)),
        from_ref<Elem>(ref::gather(rin, 0)),
        from_ref<Elem>(ref::scatter(to_ref(wide[0]), n, 0)),
        from_ref<Elem>(ref::all_to_all(to_ref(wide)))};
    const char* names[] = {"all_gather_into_tensor", "reduce_scatter_tensor_async",
                           "reduce_async",           "gather_async",
                           "scatter_async",          "all_to_all_async"};
    for (const auto& [rank, outs] : got)
      for (std::size_t f = 0; f < want.size(); ++f)
        EXPECT_TRUE(bits_equal(outs[f], want[f][static_cast<std::size_t>(rank)]))
            << world_runner().name << ", world " << n << ", rank " << rank << ", " << names[f];
  }
}

TEST_F(TensorOut, AWrongOutputSizeIsAnInvalidArgument) {
  const int n = world_runner().world_sizes.back();
  const auto got = run_world(n, [n] {
    dist::Tensor out =
        dist::Tensor::zeros({static_cast<std::int64_t>(n) * 3 + 1}, dist::DType::float32);
    try {
      dist::all_gather_into_tensor(out, dist::Tensor::zeros({3}, dist::DType::float32));
    } catch (const dist::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  for (const auto& [rank, message] : got)
    EXPECT_NE(message.find("all_gather: argument 'output'"), std::string::npos)
        << world_runner().name << ", rank " << rank << ": " << message;
}

}  // namespace
}  // namespace conformance
