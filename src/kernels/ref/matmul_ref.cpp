// The scalar path's matmul kernel table.
#include "kernels/ref/dot_ref.h"

namespace tandem::kernels::ref {
namespace {

MatMulKernelTable MakeTable() {
  MatMulKernelTable t;
  auto at = [](TensorType type) { return static_cast<size_t>(type); };
  t.float_tile[at(TensorType::kF32)] = MatMulTileF32;
  t.float_tile[at(TensorType::kF16)] = MatMulTileF16;
  t.float_tile[at(TensorType::kBF16)] = MatMulTileBF16;
  t.quant_tile[at(TensorType::kQ4_0)] = MatMulTileQ4_0;
  t.quant_tile[at(TensorType::kQ5_0)] = MatMulTileQ5_0;
  t.quant_tile[at(TensorType::kQ8_0)] = MatMulTileQ8_0;
  t.quant_tile[at(TensorType::kQ4_1)] = MatMulTileQ4_1;
  t.quant_tile[at(TensorType::kQ5_1)] = MatMulTileQ5_1;
  t.quant_tile[at(TensorType::kIQ4_NL)] = MatMulTileIQ4_NL;
  t.quant_tile[at(TensorType::kMXFP4)] = MatMulTileMXFP4;
  t.quant_tile[at(TensorType::kQ2_K)] = MatMulTileQ2_K;
  t.quant_tile[at(TensorType::kQ3_K)] = MatMulTileQ3_K;
  t.quant_tile[at(TensorType::kIQ4_XS)] = MatMulTileIQ4_XS;
  t.quant_tile[at(TensorType::kQ4_K)] = MatMulTileQ4_K;
  t.quant_tile[at(TensorType::kQ5_K)] = MatMulTileQ5_K;
  t.quant_tile[at(TensorType::kQ6_K)] = MatMulTileQ6_K;
  t.quantize_q8_0 = QuantizeActivationsQ8_0;
  t.quantize_q8_1 = QuantizeActivationsQ8_1;
  t.quantize_q8_k = QuantizeActivationsQ8_K;
  return t;
}

}  // namespace

const MatMulKernelTable& MatMulKernels() {
  static const MatMulKernelTable table = MakeTable();
  return table;
}

}  // namespace tandem::kernels::ref
