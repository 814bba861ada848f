//go:build amd64 && !amd64.v3

#include "textflag.h"

// Offsets of erlangBatch's fields.
#define cs 288
#define scratch 480
#define out 576

// func erlangGroupSSE2(batch *erlangBatch)
//
// erlangGroupGo in SSE2, two lanes a register, every operation rounded on
// its own as erlangGroupGo's scalar ones (DIVPD, MULPD, ADDPD, SUBPD; no
// fused multiply-add): the same bits. In the recursion X0..X5 hold the
// lanes' 1/B(k-1), X6..X11 inva, X12 (1, 1), X13 (k, k), X14 a
// product; each step, lane by lane, is 1/B(k) = (k * inva) * 1/B(k-1) + 1,
// k counting up by adding 1, exact below 2^53. Once k reaches cs[j], the
// registers go to scratch and lane j's 1/B to out[j], which the last pass
// turns into the lane's Erlang C.
TEXT ·erlangGroupSSE2(SB), NOSPLIT, $0-8
	MOVQ batch+0(FP), AX
	MOVQ $0x3ff0000000000000, DX // 1.0
	MOVQ DX, X12
	UNPCKLPD X12, X12
	MOVUPD 0(AX), X14
	MOVUPD 96(AX), X13
	DIVPD  X13, X14 // a = lambda / mu
	MOVUPD X14, 384(AX)
	MOVAPD X12, X6
	DIVPD  X14, X6 // inva = 1 / a
	MOVUPD 16(AX), X14
	MOVUPD 112(AX), X13
	DIVPD  X13, X14 // a = lambda / mu
	MOVUPD X14, 400(AX)
	MOVAPD X12, X7
	DIVPD  X14, X7 // inva = 1 / a
	MOVUPD 32(AX), X14
	MOVUPD 128(AX), X13
	DIVPD  X13, X14 // a = lambda / mu
	MOVUPD X14, 416(AX)
	MOVAPD X12, X8
	DIVPD  X14, X8 // inva = 1 / a
	MOVUPD 48(AX), X14
	MOVUPD 144(AX), X13
	DIVPD  X13, X14 // a = lambda / mu
	MOVUPD X14, 432(AX)
	MOVAPD X12, X9
	DIVPD  X14, X9 // inva = 1 / a
	MOVUPD 64(AX), X14
	MOVUPD 160(AX), X13
	DIVPD  X13, X14 // a = lambda / mu
	MOVUPD X14, 448(AX)
	MOVAPD X12, X10
	DIVPD  X14, X10 // inva = 1 / a
	MOVUPD 80(AX), X14
	MOVUPD 176(AX), X13
	DIVPD  X13, X14 // a = lambda / mu
	MOVUPD X14, 464(AX)
	MOVAPD X12, X11
	DIVPD  X14, X11 // inva = 1 / a
	MOVAPD X12, X13 // k = 1
	MOVAPD X12, X0
	MOVAPD X12, X1
	MOVAPD X12, X2
	MOVAPD X12, X3
	MOVAPD X12, X4
	MOVAPD X12, X5
	MOVQ $1, DX  // k, the next step
	XORQ R8, R8  // j, the next lane to finish

lanes:
	MOVQ cs(AX)(R8*8), CX
	SUBQ DX, CX
	INCQ CX // steps to cs[j]
	JLE  finish
	ADDQ CX, DX

loop:
	MOVAPD X13, X14
	MULPD  X6, X14
	MULPD  X14, X0
	ADDPD  X12, X0
	MOVAPD X13, X14
	MULPD  X7, X14
	MULPD  X14, X1
	ADDPD  X12, X1
	MOVAPD X13, X14
	MULPD  X8, X14
	MULPD  X14, X2
	ADDPD  X12, X2
	MOVAPD X13, X14
	MULPD  X9, X14
	MULPD  X14, X3
	ADDPD  X12, X3
	MOVAPD X13, X14
	MULPD  X10, X14
	MULPD  X14, X4
	ADDPD  X12, X4
	MOVAPD X13, X14
	MULPD  X11, X14
	MULPD  X14, X5
	ADDPD  X12, X5
	ADDPD  X12, X13
	DECQ   CX
	JNZ    loop

finish:
	MOVUPD X0, 480(AX)
	MOVUPD X1, 496(AX)
	MOVUPD X2, 512(AX)
	MOVUPD X3, 528(AX)
	MOVUPD X4, 544(AX)
	MOVUPD X5, 560(AX)
	MOVSD scratch(AX)(R8*8), X14
	MOVSD X14, out(AX)(R8*8)
	INCQ  R8
	CMPQ  R8, $12
	JLT   lanes

	MOVAPD X12, X0
	MOVUPD 576(AX), X1
	DIVPD  X1, X0 // b = 1 / invB
	MOVUPD 384(AX), X1
	MOVUPD 192(AX), X2
	DIVPD  X2, X1 // rho = a / c
	MOVAPD X12, X2
	SUBPD  X0, X2 // 1 - b
	MULPD  X2, X1 // rho (1 - b)
	MOVAPD X12, X3
	SUBPD  X1, X3 // 1 - rho (1 - b)
	DIVPD  X3, X0
	MOVUPD X0, 576(AX)
	MOVAPD X12, X0
	MOVUPD 592(AX), X1
	DIVPD  X1, X0 // b = 1 / invB
	MOVUPD 400(AX), X1
	MOVUPD 208(AX), X2
	DIVPD  X2, X1 // rho = a / c
	MOVAPD X12, X2
	SUBPD  X0, X2 // 1 - b
	MULPD  X2, X1 // rho (1 - b)
	MOVAPD X12, X3
	SUBPD  X1, X3 // 1 - rho (1 - b)
	DIVPD  X3, X0
	MOVUPD X0, 592(AX)
	MOVAPD X12, X0
	MOVUPD 608(AX), X1
	DIVPD  X1, X0 // b = 1 / invB
	MOVUPD 416(AX), X1
	MOVUPD 224(AX), X2
	DIVPD  X2, X1 // rho = a / c
	MOVAPD X12, X2
	SUBPD  X0, X2 // 1 - b
	MULPD  X2, X1 // rho (1 - b)
	MOVAPD X12, X3
	SUBPD  X1, X3 // 1 - rho (1 - b)
	DIVPD  X3, X0
	MOVUPD X0, 608(AX)
	MOVAPD X12, X0
	MOVUPD 624(AX), X1
	DIVPD  X1, X0 // b = 1 / invB
	MOVUPD 432(AX), X1
	MOVUPD 240(AX), X2
	DIVPD  X2, X1 // rho = a / c
	MOVAPD X12, X2
	SUBPD  X0, X2 // 1 - b
	MULPD  X2, X1 // rho (1 - b)
	MOVAPD X12, X3
	SUBPD  X1, X3 // 1 - rho (1 - b)
	DIVPD  X3, X0
	MOVUPD X0, 624(AX)
	MOVAPD X12, X0
	MOVUPD 640(AX), X1
	DIVPD  X1, X0 // b = 1 / invB
	MOVUPD 448(AX), X1
	MOVUPD 256(AX), X2
	DIVPD  X2, X1 // rho = a / c
	MOVAPD X12, X2
	SUBPD  X0, X2 // 1 - b
	MULPD  X2, X1 // rho (1 - b)
	MOVAPD X12, X3
	SUBPD  X1, X3 // 1 - rho (1 - b)
	DIVPD  X3, X0
	MOVUPD X0, 640(AX)
	MOVAPD X12, X0
	MOVUPD 656(AX), X1
	DIVPD  X1, X0 // b = 1 / invB
	MOVUPD 464(AX), X1
	MOVUPD 272(AX), X2
	DIVPD  X2, X1 // rho = a / c
	MOVAPD X12, X2
	SUBPD  X0, X2 // 1 - b
	MULPD  X2, X1 // rho (1 - b)
	MOVAPD X12, X3
	SUBPD  X1, X3 // 1 - rho (1 - b)
	DIVPD  X3, X0
	MOVUPD X0, 656(AX)
	RET
