// gloo's p2p pieces (real/gloo/p2p_pieces.hpp): the cut of a message, and messages of every piece
// shape arriving whole.
#include <gtest/gtest.h>

#include "real/gloo/p2p_pieces.hpp"
#include "real/gloo/tests/gloo_test_util.hpp"

namespace {

using namespace gloo_test;
namespace pieces = dist::real::gloo_p2p;

// The pieces cover the stream end to end, in order, each holding at most its capacity, and the
// k-th capacity is the same whatever the stream's length (what makes a mismatch safe).
TEST(GlooP2PPieces, CoverTheStreamWithCapacitiesThatIgnoreItsLength) {
  for (const std::size_t length :
       {std::size_t{16}, std::size_t{17}, std::size_t{16384}, std::size_t{16385},
        std::size_t{5} << 20, std::size_t{1} << 30}) {
    std::size_t next = 0;
    pieces::for_each_piece(length,
                           [&](int k, std::size_t start, std::size_t capacity, std::size_t held) {
      EXPECT_EQ(start, next) << length;
      EXPECT_EQ(capacity, pieces::piece_capacity(k));
      EXPECT_LE(held, capacity);
      EXPECT_GT(held, 0U);
      next = start + held;
    });
    EXPECT_EQ(next, length);
  }
  EXPECT_EQ(pieces::piece_capacity(0), std::size_t{16} << 10);
  EXPECT_EQ(pieces::piece_capacity(4), std::size_t{4} << 20);
  EXPECT_EQ(pieces::piece_capacity(12), std::size_t{4} << 20);
  EXPECT_EQ(pieces::piece_capacity(13), std::size_t{8} << 20);
}

// One piece, whole pieces, and a partial last one (int32 elements after a 16-byte header).
TEST(GlooP2P, MessagesOfEveryPieceShapeArriveWhole) {
  const std::size_t one = (pieces::piece_capacity(0) - 16) / 4;
  const std::size_t two = (pieces::piece_capacity(0) + pieces::piece_capacity(1) - 16) / 4;
  for (const std::size_t count :
       {std::size_t{0}, std::size_t{1}, one, one + 1, two, two + 1, (std::size_t{1} << 21) + 3}) {
    const auto got = run(2, [&] {
      std::vector<std::int32_t> v(count);
      if (dist::get_rank() == 0) {
        for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<std::int32_t>(i * 7 + 1);
        dist::send(std::span<const std::int32_t>(v), 1);
      } else {
        dist::recv(std::span<std::int32_t>(v), 0);
      }
      return v;
    });
    ASSERT_EQ(got[1], got[0]) << count << " elements";
  }
}

}  // namespace
