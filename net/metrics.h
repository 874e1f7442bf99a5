// A Prometheus pull endpoint (prometheus-cpp + civetweb) with process metrics read from /proc,
// and gRPC server request counting by method and status code (an interceptor).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace arbiter::net {

class MetricsEndpoint {
 public:
  // Serves GET /metrics on `address` ("host:port", ":port"; port 0 picks a free one).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& address);
  prometheus::Registry& registry() { return *registry_; }
  int port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> process_;  // the exposer only holds weak pointers
  int port_ = 0;
};

// arbiter_grpc_server_requests_total{method, code}.
class GrpcRequestMetrics {
 public:
  explicit GrpcRequestMetrics(prometheus::Registry& registry);
  void Record(const std::string& method, int code);
  // For ServerBuilder::experimental().SetInterceptorCreators.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
  InterceptorFactories();

 private:
  prometheus::Family<prometheus::Counter>& family_;
};

// Families of series registered in `registry` under `name` with `help`; add labelled series to
// them (or `.Add({})` for one unlabelled series).
prometheus::Family<prometheus::Counter>& RegisterCounters(prometheus::Registry& registry,
                                                          const char* name, const char* help);
prometheus::Family<prometheus::Gauge>& RegisterGauges(prometheus::Registry& registry,
                                                      const char* name, const char* help);
// One unlabelled histogram.
prometheus::Histogram& RegisterHistogram(prometheus::Registry& registry, const char* name,
                                         const char* help,
                                         prometheus::Histogram::BucketBoundaries buckets);
// Buckets for the wall time of jobs (perft or games): 1 ms to 30 min.
inline const prometheus::Histogram::BucketBoundaries kJobSecondsBuckets{
    0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800};

// "OK", "INVALID_ARGUMENT", ... for a grpc::StatusCode value.
std::string StatusCodeName(int code);

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_start_time_seconds, process_threads.
std::shared_ptr<prometheus::Collectable> MakeProcessCollector();

}  // namespace arbiter::net
