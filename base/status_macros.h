// Minimal RETURN_IF_ERROR / ASSIGN_OR_RETURN: Debian's Abseil 20220623 ships none.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ARBITER_CONCAT_INNER(a, b) a##b
#define ARBITER_CONCAT(a, b) ARBITER_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                             \
  do {                                                    \
    if (absl::Status _st = (expr); !_st.ok()) return _st; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(ARBITER_CONCAT(_status_or_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
