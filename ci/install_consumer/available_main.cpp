// Calls only the backend queries of <dist/init.hpp>, linked with dist::dist and dist::real as the
// README says: a static install whose backend libraries come before what they use in the
// exported link line fails to link here (a consumer that calls init_dist first pulls it in).
#include <cstdio>
#include <dist/real/init.hpp>

int main() {
  std::printf("install_consumer_available: gloo %d, mpi %d, nccl %d\n", dist::is_gloo_available(),
              dist::is_mpi_available(), dist::is_nccl_available());
  return 0;
}
