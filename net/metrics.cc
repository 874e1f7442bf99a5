#include "net/metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "base/strings.h"
#include "base/version.h"
#include "net/server.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace arbiter::net {
namespace {

class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    std::ifstream in("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the command name (which is in parentheses and may contain spaces).
    size_t close = stat.rfind(')');
    if (close == std::string::npos) return out;
    std::istringstream fields(stat.substr(close + 2));
    std::vector<std::string> f;
    for (std::string s; fields >> s;) f.push_back(s);
    // f[0] is field 3 (state): utime 14, stime 15, num_threads 20, starttime 22, vsize 23, rss 24.
    auto field = [&](int n) { return n - 3 < int(f.size()) ? std::stod(f[n - 3]) : 0.0; };
    const double ticks = double(sysconf(_SC_CLK_TCK));
    const double page = double(sysconf(_SC_PAGESIZE));
    double boot = 0;
    {
      std::ifstream s("/proc/stat");
      for (std::string line; std::getline(s, line);)
        if (line.rfind("btime ", 0) == 0) boot = std::stod(line.substr(6));
    }
    int fds = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') ++fds;
      closedir(d);
      --fds;  // the directory stream itself
    }
    auto add = [&](const char* name, const char* help, prometheus::MetricType type, double v) {
      prometheus::MetricFamily fam;
      fam.name = name;
      fam.help = help;
      fam.type = type;
      prometheus::ClientMetric m;
      if (type == prometheus::MetricType::Counter)
        m.counter.value = v;
      else
        m.gauge.value = v;
      fam.metric.push_back(m);
      out.push_back(std::move(fam));
    };
    using prometheus::MetricType;
    add("process_cpu_seconds_total", "User and system CPU time spent, in seconds.",
        MetricType::Counter, (field(14) + field(15)) / ticks);
    add("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
        field(24) * page);
    add("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
        field(23));
    add("process_open_fds", "Open file descriptors.", MetricType::Gauge, fds);
    add("process_threads", "Threads of the process.", MetricType::Gauge, field(20));
    add("process_start_time_seconds", "Start time since the Unix epoch, in seconds.",
        MetricType::Gauge, boot + field(22) / ticks);
    return out;
  }
};

class CountingInterceptor : public grpc::experimental::Interceptor {
 public:
  CountingInterceptor(std::string method, GrpcRequestMetrics* metrics)
      : method_(std::move(method)), metrics_(metrics) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS))
      metrics_->Record(method_, methods->GetSendStatus().error_code());
    methods->Proceed();
  }

 private:
  std::string method_;
  GrpcRequestMetrics* metrics_;
};

class CountingFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CountingFactory(GrpcRequestMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new CountingInterceptor(info->method() ? info->method() : "unknown", metrics_);
  }

 private:
  GrpcRequestMetrics* metrics_;
};

}  // namespace

std::string StatusCodeName(int code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  if (code >= 0 && code < int(std::size(kNames))) return kNames[code];
  return Cat("CODE_", code);
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address) {
  std::unique_ptr<MetricsEndpoint> m(new MetricsEndpoint);
  try {
    m->exposer_ = std::make_unique<prometheus::Exposer>(NormalizeAddress(address));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(Cat("cannot serve metrics on '", address, "': ", e.what()));
  }
  m->registry_ = std::make_shared<prometheus::Registry>();
  m->exposer_->RegisterCollectable(m->registry_);
  m->process_ = MakeProcessCollector();
  m->exposer_->RegisterCollectable(m->process_);
  // Which build answers: the usual *_build_info gauge, 1, with the version in its labels.
  prometheus::BuildGauge()
      .Name("arbiter_build_info")
      .Help("The arbiter build serving these metrics (value 1; version and revision as labels)")
      .Register(*m->registry_)
      .Add({{"version", std::string(kVersion)}, {"revision", std::string(kRevision)}})
      .Set(1);
  std::vector<int> ports = m->exposer_->GetListeningPorts();
  m->port_ = ports.empty() ? 0 : ports.front();
  return m;
}

prometheus::Family<prometheus::Counter>& RegisterCounters(prometheus::Registry& registry,
                                                          const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Gauge>& RegisterGauges(prometheus::Registry& registry,
                                                      const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

prometheus::Histogram& RegisterHistogram(prometheus::Registry& registry, const char* name,
                                         const char* help,
                                         prometheus::Histogram::BucketBoundaries buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add(
      {}, std::move(buckets));
}

GrpcRequestMetrics::GrpcRequestMetrics(prometheus::Registry& registry)
    : family_(RegisterCounters(registry, "arbiter_grpc_server_requests_total",
                               "gRPC requests served, by full method name and status code.")) {}

void GrpcRequestMetrics::Record(const std::string& method, int code) {
  family_.Add({{"method", method}, {"code", StatusCodeName(code)}}).Increment();
}

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
GrpcRequestMetrics::InterceptorFactories() {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> v;
  v.push_back(std::make_unique<CountingFactory>(this));
  return v;
}

std::shared_ptr<prometheus::Collectable> MakeProcessCollector() {
  return std::make_shared<ProcessCollector>();
}

}  // namespace arbiter::net
