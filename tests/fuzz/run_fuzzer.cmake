# cmake -DFUZZER=... -DCORPUS=dir -DARTIFACTS=dir/ -DDICT=file -DSECONDS=n "-DSEEDS=a;b" -P run_fuzzer.cmake
# Runs one libFuzzer target for SECONDS over a scratch corpus plus the seed directories and
# fails on any crash, leak, sanitizer report or timeout (libFuzzer exits non-zero).
# QPO_FUZZ_SECONDS in the environment overrides SECONDS (tests/fuzz/sanitize.sh uses it).
if(DEFINED ENV{QPO_FUZZ_SECONDS})
  set(SECONDS $ENV{QPO_FUZZ_SECONDS})
endif()
file(MAKE_DIRECTORY ${CORPUS} ${ARTIFACTS})
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=25 -rss_limit_mb=4096 -max_len=65536
          -print_final_stats=1 -dict=${DICT} -artifact_prefix=${ARTIFACTS} ${CORPUS} ${SEEDS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} exited with ${rc}; reproducer(s) in ${ARTIFACTS}")
endif()
