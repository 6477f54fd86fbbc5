# Script tests of h2o serve: replicas behind nginx (deploy/) and the API as
# seen by OpenAI's official Node client. include()d from
# tests/server/CMakeLists.txt; both need the h2o binary and the bundled model.
set(H2O_SERVE_TEST_MODEL ${PROJECT_SOURCE_DIR}/models/stories260K.gguf)

add_test(NAME ServeReplicas.BehindNginx
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replicas_test.sh $<TARGET_FILE:h2o> ${H2O_SERVE_TEST_MODEL})
set_tests_properties(ServeReplicas.BehindNginx PROPERTIES TIMEOUT 180 LABELS server)

# Skipped (77) only where node or tests/server/openai/node_modules is missing.
add_test(NAME ServeOpenAI.ClientLibrary
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/openai/run_test.sh $<TARGET_FILE:h2o> ${H2O_SERVE_TEST_MODEL})
set_tests_properties(ServeOpenAI.ClientLibrary PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77 LABELS server)

# The web playground in headless Chromium; skipped (77) only where chromium
# or chromedriver is missing (scripts/setup.sh installs both).
add_test(NAME Playground.HeadlessChromium
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/test_playground.sh $<TARGET_FILE:h2o>
                 ${H2O_SERVE_TEST_MODEL} ${CMAKE_BINARY_DIR}/playground.png)
set_tests_properties(Playground.HeadlessChromium PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77 LABELS server)
