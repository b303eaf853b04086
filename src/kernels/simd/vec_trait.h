// The vector trait the kernels in simd/ are written against, once for every vector width.
//
// A trait is a struct of static functions over one ISA's registers (avx2/vec_avx2.h: 8 f32
// lanes; avx512/vec_avx512.h: 16). A kernel template `template <class V> ...` in a simd/*-inl.h
// file is instantiated in each ISA's own translation units, compiled with that ISA's flags
// (src/kernels/CMakeLists.txt), which define the ISA's entry points (ops_isa.h, attention_isa.h,
// matmul_kernel.h) from it. Every instantiation names its trait, so no symbol compiled for one
// ISA is shared with another; the -inl.h files therefore hold templates only.
//
// Numerics: each trait operation is one IEEE operation per lane (or an exact one: loads,
// selects, sign and integer ops), so a kernel template fixes the operation order of every lane.
// The reductions (ReduceSum, ReduceSumD, ReduceMax) are each trait's fixed tree; together with
// kLanes, that is what makes results differ between vector widths, and only that.
#pragma once

#include <concepts>
#include <cstdint>

namespace tandem::kernels::simd {

// clang-format off
template <class T>
concept VecTrait = requires(typename T::V v, typename T::VD d, typename T::VI i,
                            typename T::M m, const float* p, float* out, const void* half,
                            float f, int n, int8_t* bytes, typename T::VI* codes,
                            typename T::V* vectors, typename T::Bytes16 q16) {
  // V: kLanes f32; VD: kLanes / 2 f64; VI: kLanes i32; M: a lane mask.
  requires T::kLanes == 8 || T::kLanes == 16;
  requires T::kRegisters >= 16;  // vector registers the ISA has
  { T::Zero() } -> std::same_as<typename T::V>;
  { T::Set1(f) } -> std::same_as<typename T::V>;
  { T::Load(p) } -> std::same_as<typename T::V>;         // unaligned
  { T::LoadAligned(p) } -> std::same_as<typename T::V>;  // aligned to sizeof(V)
  T::Store(out, v);
  T::StoreAligned(out, v);
  { T::LoadF16(half) } -> std::same_as<typename T::V>;   // kLanes fp16 values, widened
  { T::LoadBF16(half) } -> std::same_as<typename T::V>;  // kLanes bf16 values, widened
  { T::HalfToFloat(uint16_t{}) } -> std::same_as<float>;  // one fp16 value
  { T::FloatToHalf(f) } -> std::same_as<uint16_t>;        // round to nearest even
  T::StoreHalves(v, static_cast<uint16_t*>(nullptr));     // kLanes fp16 values, as FloatToHalf
  // Lanes [0, n) of a partial vector (0 <= n <= kLanes); loads give zeros elsewhere.
  { T::FirstN(int64_t{}) } -> std::same_as<typename T::M>;
  { T::MaskLoad(m, p) } -> std::same_as<typename T::V>;
  { T::MaskLoadOr(v, m, p) } -> std::same_as<typename T::V>;  // v where m is clear
  T::MaskStore(m, out, v);
  { T::LoadPartialF16(half, n) } -> std::same_as<typename T::V>;
  { T::LoadPartialBF16(half, n) } -> std::same_as<typename T::V>;
  // Arithmetic, one rounding each; MulAdd(a, b, c) = a·b + c and NegMulAdd(a, b, c) = c - a·b
  // are fused. Min/Max return the second operand when either is NaN (x86 semantics).
  { T::Add(v, v) } -> std::same_as<typename T::V>;
  { T::Sub(v, v) } -> std::same_as<typename T::V>;
  { T::Mul(v, v) } -> std::same_as<typename T::V>;
  { T::Div(v, v) } -> std::same_as<typename T::V>;
  { T::Min(v, v) } -> std::same_as<typename T::V>;
  { T::Max(v, v) } -> std::same_as<typename T::V>;
  { T::MulAdd(v, v, v) } -> std::same_as<typename T::V>;
  { T::NegMulAdd(v, v, v) } -> std::same_as<typename T::V>;
  { T::Abs(v) } -> std::same_as<typename T::V>;
  { T::CopySignToAbs(v, v) } -> std::same_as<typename T::V>;  // abs | sign bit of the second
  { T::RoundNearest(v) } -> std::same_as<typename T::V>;      // to nearest even, as f32
  { T::Trunc(v) } -> std::same_as<typename T::V>;
  { T::MulPow2(v, v) } -> std::same_as<typename T::V>;  // a · 2^b, b integral in [-126, 127]
  // Ordered comparisons (false for NaN) and selects.
  { T::Lt(v, v) } -> std::same_as<typename T::M>;
  { T::Gt(v, v) } -> std::same_as<typename T::M>;
  { T::Ge(v, v) } -> std::same_as<typename T::M>;
  { T::Eq(v, v) } -> std::same_as<typename T::M>;
  { T::IfThenElse(m, v, v) } -> std::same_as<typename T::V>;
  { T::IfThenElseZero(m, v) } -> std::same_as<typename T::V>;
  { T::IfThenZeroElse(m, v) } -> std::same_as<typename T::V>;
  { T::AddIf(m, v, v) } -> std::same_as<typename T::V>;  // a + b where m, a (or a + 0) elsewhere
  { T::MaskBits(m) } -> std::same_as<unsigned>;          // bit l = lane l
  { T::ReduceSum(v) } -> std::same_as<float>;
  // Lane l = ReduceSum(vectors[l]) for kLanes vectors, each by ReduceSum's own tree (so the
  // same bits), the vectors transposed as they are added: a few shuffles a vector, not a
  // reduction each.
  { T::SumEach(vectors) } -> std::same_as<typename T::V>;
  { T::ReduceMax(v) } -> std::same_as<float>;
  // f64 halves, for sums that need the range.
  { T::ZeroD() } -> std::same_as<typename T::VD>;
  { T::AddD(d, d) } -> std::same_as<typename T::VD>;
  { T::PromoteLower(v) } -> std::same_as<typename T::VD>;  // lanes [0, kLanes / 2)
  { T::PromoteUpper(v) } -> std::same_as<typename T::VD>;  // lanes [kLanes / 2, kLanes)
  { T::ReduceSumD(d) } -> std::same_as<double>;
  // i32 lanes: conversions (nearest even / toward zero), exact integer ops.
  { T::ConvertNearest(v) } -> std::same_as<typename T::VI>;
  { T::ConvertTrunc(v) } -> std::same_as<typename T::VI>;
  { T::MinI32(i, n) } -> std::same_as<typename T::VI>;
  { T::AddI32(i, i) } -> std::same_as<typename T::VI>;
  { T::ReduceSumI32(i) } -> std::same_as<int32_t>;
  // 16 values are kPer16 vectors: 16 int8 (in a 128-bit register) widened to f32, and 16 i32
  // codes in -128..127 stored as bytes.
  requires T::kPer16 * T::kLanes == 16;
  T::I8x16ToF32(q16, vectors);
  T::StoreI8x16(codes, bytes);
};
// clang-format on

}  // namespace tandem::kernels::simd
