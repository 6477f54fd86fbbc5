#include "core/status.h"

#include <gtest/gtest.h>

namespace h2o {
namespace {

TEST(Status, AnErrorIsInvalidInputUnlessItSaysOtherwise) {
  EXPECT_EQ(Status::Ok().code(), StatusCode::kOk);
  EXPECT_EQ(Status::Error("bad flag").code(), StatusCode::kInvalidArgument);
  const Status busy = Status::Error(StatusCode::kUnavailable, "the queue is full");
  EXPECT_FALSE(busy.ok());
  EXPECT_EQ(busy.code(), StatusCode::kUnavailable);
  // An error is never ok, whatever code it is given.
  EXPECT_FALSE(Status::Error(StatusCode::kOk, "x").ok());
}

TEST(Status, ContextKeepsTheCode) {
  const Status s = Status::Error(StatusCode::kUnavailable, "the queue is full").WithContext("submit");
  EXPECT_EQ(s.message(), "submit: the queue is full");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.WithContext("submit").message(), "submit: the queue is full");
}

}  // namespace
}  // namespace h2o
