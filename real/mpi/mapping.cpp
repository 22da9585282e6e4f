// The MPI datatype and user-operation tables. MPI calls a user operation with no context but the
// datatype, so every (dtype, op) pair gets its own function, instantiated from one template.
#include "real/mpi/mapping.hpp"

#include <array>
#include <climits>
#include <utility>

#include "core/host_reduce.hpp"
#include "dist/errors.hpp"

namespace dist::real {

namespace {

constexpr std::size_t dtypes = std::size(all_dtypes);
constexpr std::size_t ops = 8;  // ReduceOp's enumerators

// MPI's contract: inout[i] = in[i] ∘ inout[i], with `in` from the lower ranks; the reference
// folds lower ranks first too.
template <std::size_t D, std::size_t O>
void user_function(void* in, void* inout, int* len, MPI_Datatype*) {
  static const core::ReduceStep step =
      core::reduce_step(static_cast<DType>(D), static_cast<ReduceOp>(O));
  step(inout, in, inout, static_cast<std::size_t>(*len));
}

template <std::size_t... I>
constexpr std::array<MPI_User_function*, dtypes * ops> make_functions(std::index_sequence<I...>) {
  return {&user_function<I / ops, I % ops>...};
}
constexpr auto functions = make_functions(std::make_index_sequence<dtypes * ops>{});

}  // namespace

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::int8: return MPI_INT8_T;
    case DType::uint8: return MPI_UINT8_T;
    case DType::int32: return MPI_INT32_T;
    case DType::uint32: return MPI_UINT32_T;
    case DType::int64: return MPI_INT64_T;
    case DType::uint64: return MPI_UINT64_T;
    case DType::float16:
    case DType::bfloat16: return MPI_UINT16_T;
    case DType::float32: return MPI_FLOAT;
    case DType::float64: return MPI_DOUBLE;
  }
  throw InvalidArgument("mpi: unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

MPI_Op mpi_op(DType dtype, ReduceOp op) {
  static std::array<MPI_Op, dtypes * ops> created = [] {
    std::array<MPI_Op, dtypes * ops> none{};
    none.fill(MPI_OP_NULL);
    return none;
  }();
  const auto d = static_cast<std::size_t>(dtype);
  const auto o = static_cast<std::size_t>(op);
  if (d >= dtypes || o >= ops)
    throw InvalidArgument("mpi: unknown dtype or reduce op (" + std::to_string(d) + ", " +
                          std::to_string(o) + ")");
  MPI_Op& slot = created[d * ops + o];
  if (slot == MPI_OP_NULL) {
    MPI_Op made = MPI_OP_NULL;
    const int code = MPI_Op_create(functions[d * ops + o], /*commute=*/1, &made);
    if (code != MPI_SUCCESS)
      throw BackendError("mpi: MPI_Op_create failed for " + std::string(to_string(op)) + " on " +
                             std::string(to_string(dtype)),
                         code);
    slot = made;
  }
  return slot;
}

int mpi_count(std::size_t count, const char* operation) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument("mpi " + std::string(operation) + ": " + std::to_string(count) +
                          " elements exceed MPI's int count (" + std::to_string(INT_MAX) +
                          "); split the tensor or use another backend");
  return static_cast<int>(count);
}

}  // namespace dist::real
