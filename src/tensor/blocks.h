// Every ggml block layout tandem reads or writes, for code that handles several families (the
// kernels). Each layout lives with its codec in tensor/formats/ (docs/formats.md): its struct,
// laid out exactly as in a GGUF file with static_asserts on size and offsets, the tables and
// unpack helpers of its family.
#pragma once

#include "tensor/formats/iq4.h"
#include "tensor/formats/kquant.h"
#include "tensor/formats/legacy.h"
#include "tensor/formats/mxfp4.h"
