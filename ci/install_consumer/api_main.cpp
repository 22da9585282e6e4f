// Links dist::dist alone (no sim, no real backend) and calls every function <dist/dist.hpp>
// declares, in the non-distributed mode (a world of 1): queries, collectives, p2p, object helpers,
// dist::comm, Tensor/DLPack, the parse/to_string helpers and the errors, checking each result.
#include <dlpack/dlpack.h>

#include <cstdio>
#include <cstdlib>
#include <dist/dist.hpp>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

int checks = 0, failures = 0;

void check(bool ok, const char* what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "install_consumer_api: FAILED: %s\n", what);
  }
}

// Runs f and checks that it throws E (thrown inside libdist, caught here by its type and code).
template <class E, class F>
void check_throws(F&& f, dist::ErrorCode code, const char* what) {
  try {
    f();
    check(false, what);
  } catch (const E& e) {
    check(e.code() == code, what);
  } catch (...) {
    check(false, what);
  }
}

void queries() {
  check(!dist::is_distributed() && dist::get_world_size() == 1 && dist::get_rank() == 0, "world");
  check(!dist::get_backend() && dist::get_comm_device() == dist::Device::cpu(), "backend");
  check(dist::get_dist_info() == std::make_pair(0, 1) && dist::is_main_process(), "dist_info");
  check(dist::get_local_rank() == 0 && dist::get_local_size() == 1, "local rank and size");
  check(!dist::get_local_group(), "local group");
  dist::barrier();
  dist::Work done = dist::barrier_async();
  check(done.is_completed(), "barrier_async");
  done.wait();
  const dist::Group world;
  check(world.is_default() && !world.state(), "default group");
  check(world.is_member() && world.ranks() == std::vector<int>{0}, "the world of one rank");
  check_throws<dist::NotInitialized>([] { dist::new_group({0}); }, dist::ErrorCode::not_initialized,
                                     "new_group");
  dist::destroy_dist();  // a no-op when nothing is initialised
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("SLURM_NTASKS");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  check(dist::infer_launcher() == "none", "infer_launcher none");
  ::setenv("SLURM_NTASKS", "4", 1);
  check(dist::infer_launcher() == "slurm", "infer_launcher slurm");
  ::unsetenv("SLURM_NTASKS");
  auto twice = dist::master_only([](int x) { return 2 * x; });
  check(twice(21) == std::optional<int>(42), "master_only");
}

void value_types() {
  check(static_cast<float>(dist::float16(1.5f)) == 1.5f, "float16");
  check(static_cast<float>(dist::bfloat16(-2.0f)) == -2.0f, "bfloat16");
  check(dist::to_string(dist::DType::bfloat16) == "bfloat16" &&
            dist::dtype_size(dist::DType::int64) == 8,
        "dtype helpers");
  check(dist::is_floating(dist::DType::float16) && !dist::is_floating(dist::DType::uint8),
        "is_floating");
  check(dist::to_string(dist::ReduceOp::bxor) == "bxor", "to_string(ReduceOp)");
  check(dist::parse_reduce_op("MeAn") == dist::ReduceOp::mean && !dist::parse_reduce_op("avg"),
        "parse_reduce_op");
  check(dist::is_bitwise(dist::ReduceOp::band) && !dist::is_bitwise(dist::ReduceOp::max),
        "is_bitwise");
  check(!dist::op_allowed(dist::ReduceOp::bor, dist::DType::float32), "op_allowed");
  check(dist::OpArg("product").resolve() == dist::ReduceOp::product, "OpArg");
  check_throws<dist::InvalidArgument>([] { dist::OpArg("avg").resolve(); },
                                      dist::ErrorCode::invalid_argument, "OpArg unknown name");
  check(dist::to_string(dist::Backend::nccl) == "nccl", "to_string(Backend)");
  check(dist::parse_device("cuda:3") == dist::Device::cuda(3), "parse_device");
  check(dist::to_string(dist::Device::cuda(1)) == "cuda:1", "to_string(Device)");
  check_throws<dist::InvalidArgument>([] { dist::parse_device("tpu"); },
                                      dist::ErrorCode::invalid_argument, "parse_device error");
  check(dist::to_string(dist::ErrorCode::deadlock) == "deadlock", "to_string(ErrorCode)");
  const dist::TimeoutError timeout("late", {2});
  const dist::RankFailure failure("gone", 3);
  const dist::BackendError backend("vendor", 7);
  check(timeout.missing_ranks() == std::vector<int>{2} && failure.failed_rank() == 3 &&
            backend.vendor_code() == 7 &&
            dist::DesyncError("d").code() == dist::ErrorCode::desync &&
            dist::DeadlockError("x").code() == dist::ErrorCode::deadlock,
        "error classes");
}

void tensors() {
  dist::Tensor none;
  check(none.numel() == 0 && none.dtype() == dist::DType::float32, "Tensor()");
  auto z = dist::Tensor::zeros({2, 2}, dist::DType::int32);
  check(z.values<std::int32_t>()[3] == 0 && z.nbytes() == 16, "zeros");
  auto e = dist::Tensor::empty({3}, dist::DType::float64);
  e.copy_from(dist::Tensor::from(std::vector<double>{1, 2, 3}));
  check(e.values<double>()[2] == 3.0 && e.to(dist::Device::cpu()).values<double>()[0] == 1.0,
        "copy_from");
  std::vector<float> memory{1, 2, 3, 4};
  auto view = dist::Tensor::view(std::span<float>(memory), {2, 2});
  check(!view.is_owning() && view.reshape({4}).shape() == std::vector<std::int64_t>{4}, "view");
  check(view.sub(2, {2}).values<float>()[0] == 3.0f && view.clone().is_owning(), "sub and clone");
  auto raw = dist::Tensor::view(memory.data(), dist::DType::float32, {4});
  check(raw.data() == memory.data(), "view(void*)");
  DLManagedTensor* managed = view.to_dlpack();
  check(managed->dl_tensor.ndim == 2, "to_dlpack");
  auto back = dist::Tensor::from_dlpack(managed);
  check(back.values<float>()[1] == 2.0f, "from_dlpack");
}

void collectives() {
  std::vector<int> v{1, 2, 3};
  dist::all_reduce(v, "sum");
  dist::all_reduce(std::span<int>(v), dist::ReduceOp::max);
  dist::all_reduce_async(std::span<int>(v)).wait();
  dist::broadcast(v, 0);
  dist::broadcast_async(std::span<int>(v)).wait();
  dist::reduce(v, 0);
  dist::reduce_async(std::span<int>(v)).wait();
  check(v == std::vector<int>{1, 2, 3}, "identity collectives");
  check(dist::all_gather(v) == std::vector<std::vector<int>>{{1, 2, 3}}, "all_gather");
  check(dist::gather(v)[0] == v, "gather");
  check(dist::reduce_scatter(v) == v && dist::all_to_all(v) == v, "reduce_scatter, all_to_all");
  std::vector<int> out(3);
  dist::scatter(out, std::vector<std::vector<int>>{{4, 5, 6}});
  check(out == std::vector<int>{4, 5, 6}, "scatter");
  dist::all_gather_async(std::span<int>(out), std::span<int>(v)).wait();
  dist::gather_async(std::span<int>(out), std::span<int>(v)).wait();
  dist::scatter_async(std::span<int>(out), std::span<int>(v)).wait();
  dist::reduce_scatter_async(std::span<int>(out), std::span<int>(v)).wait();
  dist::all_to_all_async(std::span<int>(out), std::span<int>(v)).wait();
  check(out == v, "async collectives");

  auto t = dist::Tensor::from(std::vector<double>{1, 2, 3, 4}, {2, 2});
  dist::all_reduce(t, "mean");
  dist::all_reduce_async(t).wait();
  dist::broadcast(t, 0);
  dist::broadcast_async(t, 0).wait();
  dist::reduce(t, 0);
  check(t.values<double>()[3] == 4.0, "tensor collectives");
  check(dist::all_gather(t).size() == 1 && dist::gather(t)[0].shape() == t.shape(),
        "tensor gathers");
  check(dist::reduce_scatter(t).numel() == 4 && dist::all_to_all(t).numel() == 4,
        "tensor reduce_scatter");
  auto target = dist::Tensor::zeros({2, 2}, dist::DType::float64);
  dist::scatter(target, std::vector<dist::Tensor>{t});
  check(target.values<double>()[2] == 3.0, "tensor scatter");
}

void point_to_point() {
  std::vector<float> data(2);
  check_throws<dist::InvalidArgument>([&] { dist::send(data, 1); },
                                      dist::ErrorCode::invalid_argument,
                                      "send to a rank outside a world of 1");
  check_throws<dist::InvalidArgument>([&] { dist::recv(data, 0); },
                                      dist::ErrorCode::invalid_argument, "recv from itself");
  auto t = dist::Tensor::from(std::vector<float>{1, 2});
  check_throws<dist::InvalidArgument>([&] { dist::send(t, 1); }, dist::ErrorCode::invalid_argument,
                                      "send(Tensor)");
  check_throws<dist::InvalidArgument>([&] { dist::recv(t, 0); }, dist::ErrorCode::invalid_argument,
                                      "recv(Tensor)");
  check_throws<dist::InvalidArgument>([&] { (void)dist::isend(t, 1); },
                                      dist::ErrorCode::invalid_argument, "isend");
  check_throws<dist::InvalidArgument>([&] { (void)dist::irecv(t, 0); },
                                      dist::ErrorCode::invalid_argument, "irecv");
  check_throws<dist::InvalidArgument>([&] { (void)dist::isend(std::span<float>(data), 1); },
                                      dist::ErrorCode::invalid_argument, "isend(span)");
  check_throws<dist::InvalidArgument>([&] { (void)dist::irecv(std::span<float>(data), 0); },
                                      dist::ErrorCode::invalid_argument, "irecv(span)");
}

void objects() {
  std::vector<std::string> list{"a", "b"};
  dist::broadcast_object_list(list, 0);
  check(list == std::vector<std::string>{"a", "b"}, "broadcast_object_list");
  check(dist::all_gather_object(std::string("x")) == std::vector<std::string>{"x"},
        "all_gather_object");
  check(dist::gather_object(7) == std::vector<int>{7}, "gather_object");
  std::map<std::string, std::vector<float>> vectors{{"a", {1.5f}}};
  dist::all_reduce_dict(vectors, "mean");
  std::map<std::string, double> scalars{{"loss", 0.25}};
  dist::all_reduce_dict(scalars);
  std::map<std::string, dist::Tensor> tensors{{"t", dist::Tensor::from(std::vector<int>{5})}};
  dist::all_reduce_dict(tensors);
  check(vectors.at("a")[0] == 1.5f && scalars.at("loss") == 0.25 &&
            tensors.at("t").values<int>()[0] == 5,
        "all_reduce_dict");
  check(dist::sync_random_seed() >= 0, "sync_random_seed");
  const std::vector<int> part{3, 1, 2};
  check(dist::collect_results(part, 2) == std::vector<int>{3, 1}, "collect_results cpu");
  check(dist::collect_results(part, 5, "gpu") == part, "collect_results gpu");
  check_throws<dist::InvalidArgument>([&] { dist::collect_results(part, -1); },
                                      dist::ErrorCode::invalid_argument,
                                      "collect_results size < 0");
}

void comm_helpers() {
  dist::comm::synchronize();
  dist::comm::set_object_group(std::nullopt);
  check(dist::comm::all_gather(std::string("x")) == std::vector<std::string>{"x"},
        "comm::all_gather");
  check(dist::comm::gather(5, 0) == std::vector<int>{5}, "comm::gather");
  check(dist::comm::shared_random_seed() >= 0, "comm::shared_random_seed");
  const std::map<std::string, float> scalars{{"loss", 2.0f}};
  const std::map<std::string, std::vector<int>> vectors{{"n", {1, 2}}};
  const std::map<std::string, dist::Tensor> tensors{
      {"t", dist::Tensor::from(std::vector<float>{4})}};
  check(dist::comm::reduce_dict(scalars) == scalars && dist::comm::reduce_dict(vectors) == vectors,
        "comm::reduce_dict");
  check(dist::comm::reduce_dict(tensors).at("t").values<float>()[0] == 4.0f,
        "comm::reduce_dict(Tensor)");
  check(dist::comm::get_rank() == 0 && dist::comm::get_world_size() == 1 &&
            dist::comm::is_main_process() && dist::comm::get_local_rank() == 0 &&
            dist::comm::get_local_size() == 1,
        "comm queries");
  check_throws<dist::NotInitialized>([] { dist::comm::get_local_process_group(); },
                                     dist::ErrorCode::not_initialized,
                                     "comm::get_local_process_group");
  check_throws<dist::NotInitialized>([] { dist::comm::create_local_process_group(1); },
                                     dist::ErrorCode::not_initialized,
                                     "comm::create_local_process_group");
  check(dist::comm::object_group().is_default(), "comm::object_group");
}

}  // namespace

int main() {
  queries();
  value_types();
  tensors();
  collectives();
  point_to_point();
  objects();
  comm_helpers();
  if (failures) {
    std::fprintf(stderr, "install_consumer_api: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  std::printf("install_consumer_api: dist::dist alone, not distributed: %d checks OK\n", checks);
  return 0;
}
