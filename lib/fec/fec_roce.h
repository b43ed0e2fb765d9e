/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file fec_roce.h
 * lib/fec as lib/roce's FEC codec (roce_fec.h): register it with
 * roce_fec_register(&fec_roce_codec) before turning FEC on for a QP.
 */
#ifndef FEC_ROCE_H
#define FEC_ROCE_H

#include "roce_fec.h"

extern const struct roce_fec_ops fec_roce_codec;

#endif /* FEC_ROCE_H */
