//go:build amd64 && !amd64.v3

#include "textflag.h"

// func erlangGroupSSE2(inva *[12]float64, cs *[12]int, scratch, invB *[12]float64)
//
// erlangGroupGo in SSE2, two lanes a register: X0..X5 hold the lanes'
// 1/B(k-1), X6..X11 inva, X12 (1, 1), X13 (k, k), X14 a product. Each step,
// lane by lane, is 1/B(k) = (k * inva) * 1/B(k-1) + 1 with each product and
// the sum rounded on its own (MULPD, ADDPD), as erlangGroupGo's
// 1 + k*inva*b; k counts up by adding 1, exact below 2^53. Once k reaches
// cs[j], the registers go to scratch and lane j's to invB[j].
TEXT ·erlangGroupSSE2(SB), NOSPLIT, $0-32
	MOVQ inva+0(FP), AX
	MOVQ cs+8(FP), SI
	MOVQ scratch+16(FP), DI
	MOVQ invB+24(FP), BX
	MOVQ $0x3ff0000000000000, DX // 1.0
	MOVQ DX, X12
	UNPCKLPD X12, X12
	MOVAPD X12, X13
	MOVAPD X12, X0
	MOVAPD X12, X1
	MOVAPD X12, X2
	MOVAPD X12, X3
	MOVAPD X12, X4
	MOVAPD X12, X5
	MOVUPD 0(AX), X6
	MOVUPD 16(AX), X7
	MOVUPD 32(AX), X8
	MOVUPD 48(AX), X9
	MOVUPD 64(AX), X10
	MOVUPD 80(AX), X11
	MOVQ $1, DX  // k, the next step
	XORQ R8, R8  // j, the next lane to finish

lanes:
	MOVQ (SI)(R8*8), CX
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
	MOVUPD X0, 0(DI)
	MOVUPD X1, 16(DI)
	MOVUPD X2, 32(DI)
	MOVUPD X3, 48(DI)
	MOVUPD X4, 64(DI)
	MOVUPD X5, 80(DI)
	MOVSD (DI)(R8*8), X14
	MOVSD X14, (BX)(R8*8)
	INCQ  R8
	CMPQ  R8, $12
	JLT   lanes
	RET
