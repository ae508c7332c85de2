// CHECK of the front-end conformance programs: a condition that does not hold prints
// "FAILED FILE:LINE: CONDITION" and ends the check with status 1.
#pragma once
#include <cstdio>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
            return 1;                                                            \
        }                                                                        \
    } while (0)
