# Writes OUT (base/revision.h in the build tree) with the version and the git revision of SRC,
# rewriting it only when they change, so that a new commit relinks only what shows the version.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown")
endif()
set(text "#define ARBITER_VERSION \"${VERSION}\"\n#define ARBITER_REVISION \"${revision}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
