#include "textflag.h"

// fusedMulAdd: the compiler fuses x*y + z at GOAMD64=v3 and above.
#ifdef GOAMD64_v3
#define fusedMulAdd
#endif
#ifdef GOAMD64_v4
#define fusedMulAdd
#endif

// func rows4AVX(w, x, b, y *float64, nin, nrows int)
//
// For each group of four rows of w: Y0..Y3 = 0; for j in 0..nin-1:
// Yc += broadcast(w[row c][j]) * x[j*4 : j*4+4]; then y[row c] = broadcast(b[c]) + Yc.
//
// The multiply-add is fused exactly where the compiler fuses rows4Go's and
// dot4's s += w*x: at GOAMD64=v3 and above (fusedMulAdd), so that both paths give
// the same bits at every GOAMD64 level.
TEXT ·rows4AVX(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ x+8(FP), DX
	MOVQ b+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ nin+32(FP), CX
	MOVQ nrows+40(FP), R8
	MOVQ CX, R9
	SHLQ $3, R9 // bytes per row of w

rows:
	CMPQ R8, $4
	JLT  done
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	LEAQ (R10)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	MOVQ DX, AX
	MOVQ CX, SI

cols:
	VMOVUPD      (AX), Y4
	VBROADCASTSD (R10), Y5
#ifdef fusedMulAdd
	VFMADD231PD  Y4, Y5, Y0
#else
	VMULPD       Y4, Y5, Y5
	VADDPD       Y5, Y0, Y0
#endif
	VBROADCASTSD (R11), Y6
#ifdef fusedMulAdd
	VFMADD231PD  Y4, Y6, Y1
#else
	VMULPD       Y4, Y6, Y6
	VADDPD       Y6, Y1, Y1
#endif
	VBROADCASTSD (R12), Y7
#ifdef fusedMulAdd
	VFMADD231PD  Y4, Y7, Y2
#else
	VMULPD       Y4, Y7, Y7
	VADDPD       Y7, Y2, Y2
#endif
	VBROADCASTSD (R13), Y8
#ifdef fusedMulAdd
	VFMADD231PD  Y4, Y8, Y3
#else
	VMULPD       Y4, Y8, Y8
	VADDPD       Y8, Y3, Y3
#endif
	ADDQ         $32, AX
	ADDQ         $8, R10
	ADDQ         $8, R11
	ADDQ         $8, R12
	ADDQ         $8, R13
	DECQ         SI
	JNZ          cols

	VBROADCASTSD (BX), Y5
	VADDPD       Y0, Y5, Y0
	VMOVUPD      Y0, (DI)
	VBROADCASTSD 8(BX), Y6
	VADDPD       Y1, Y6, Y1
	VMOVUPD      Y1, 32(DI)
	VBROADCASTSD 16(BX), Y7
	VADDPD       Y2, Y7, Y2
	VMOVUPD      Y2, 64(DI)
	VBROADCASTSD 24(BX), Y8
	VADDPD       Y3, Y8, Y3
	VMOVUPD      Y3, 96(DI)
	ADDQ         $32, BX
	ADDQ         $128, DI
	MOVQ         R13, R10 // row 3's end is the next group's row 0
	SUBQ         $4, R8
	JMP          rows

done:
	VZEROUPPER
	RET
