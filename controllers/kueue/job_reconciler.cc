#include "controllers/kueue/job_reconciler.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/kueue_job_webhook.h"
#include "api/conditions.h"
#include "api/priority_admission.h"
#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/workload_lifecycle.h"
#include "controllers/kueue/workload_status.h"
#include "core/hash.h"

namespace berth::controllers::kueue {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

// The offset basis Workload names have always been hashed with (one digit short of FNV's):
// a different one would rename the Workload of every existing job.
constexpr uint64_t kWorkloadNameHashBasis = 1469598103934665603ull;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const api::Object& PodSpecOf(const api::Object& tmpl) {
  static const api::Object kEmpty = api::Object::object();
  auto s = tmpl.find("spec");
  return s != tmpl.end() && s->is_object() ? *s : kEmpty;
}

// The job's Workload: the one owned (controller ref) by the job's uid.
client::ObjectPtr FindWorkload(KueueCache& cache, const api::Object& job) {
  for (const auto& wl : cache.WorkloadsByIndex(kOwnerIndex, api::Uid(job))) {
    if (api::Namespace(*wl) == api::Namespace(job)) return wl;
  }
  return nullptr;
}

}  // namespace

JobReconciler::JobReconciler(client::Client& client, client::SharedInformerFactory& factory, KueueCache& cache,
                             EventRecorder& recorder, Clock& clock, std::unique_ptr<JobIntegration> integration,
                             JobReconcilerOptions options)
    : client_(client),
      cache_(cache),
      recorder_(recorder),
      clock_(clock),
      integration_(std::move(integration)),
      options_(options),
      jobs_(&factory.ForResource(integration_->Resource())) {}

std::string JobReconciler::WorkloadName(const std::string& job_name, const api::GroupVersionKind& kind) {
  std::string prefix = Lower(kind.kind) + "-" + job_name;
  if (prefix.size() > 253 - 6) prefix.resize(253 - 6);
  const uint64_t h = Fnv1a64(job_name + "/" + kind.kind + "." + kind.group, kWorkloadNameHashBasis);
  return fmt::format("{}-{:05x}", prefix, h & 0xfffff);
}

Status JobReconciler::UpdateJob(const GenericJob& job) {
  auto ref = integration_->Resource().Namespace(api::Namespace(job.object()));
  return client_.Update(ref, job.object()).status();
}

Status JobReconciler::UpdateWorkloadStatus(const api::Object& wl) {
  auto res = client_.UpdateStatus(kWorkloads.Namespace(api::Namespace(wl)), wl);
  if (res.ok()) cache_.Assume(res.value());
  return res.status();
}

StatusOr<std::pair<int32_t, api::Object>> JobReconciler::ResolvePriority(const GenericJob& job) {
  const std::string wpc = Label(job.object(), kPriorityClassLabel);
  if (!wpc.empty()) {
    client::ObjectPtr cls = cache_.workload_priority_classes().GetIndexer().Get(wpc);
    if (!cls) return NotFoundError(fmt::format("workloadPriorityClass \"{}\" not found", wpc));
    api::Object ref = {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", wpc}};
    return std::make_pair(cls->value("value", 0), ref);
  }
  for (const PodSet& ps : job.PodSets()) {
    const std::string pc = PodSpecOf(ps.template_spec).value("priorityClassName", "");
    if (pc.empty()) continue;
    client::ObjectPtr cls = cache_.priority_classes().GetIndexer().Get(pc);
    if (!cls) return NotFoundError(fmt::format("priorityclass.scheduling.k8s.io \"{}\" not found", pc));
    api::Object ref = {{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"}, {"name", pc}};
    return std::make_pair(cls->value("value", 0), ref);
  }
  // The globalDefault PriorityClass, else 0 (Kueue's getDefaultPriority).
  const std::vector<client::ObjectPtr> classes = cache_.priority_classes().GetIndexer().List();
  if (const api::Object* def = api::DefaultPriorityClass(classes)) {
    api::Object ref = {{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"}, {"name", api::Name(*def)}};
    return std::make_pair(static_cast<int32_t>(api::IntAt(*def, "value", 0)), ref);
  }
  return std::make_pair(0, api::Object());
}

StatusOr<api::Object> JobReconciler::NewWorkload(const GenericJob& job) {
  const api::Object& obj = job.object();
  const api::GroupVersionKind kind = integration_->Kind();
  BERTH_ASSIGN_OR_RETURN(auto priority, ResolvePriority(job));
  api::Object pod_sets = api::Object::array();
  for (const PodSet& ps : job.PodSets()) {
    pod_sets.push_back(ps.ToWorkloadPodSet());
  }
  api::Object spec = {{"queueName", Label(obj, kQueueNameLabel)}, {"podSets", pod_sets},
                      {"priority", priority.first}, {"active", true}};
  if (!priority.second.is_null()) spec["priorityClassRef"] = priority.second;
  api::Object owner = {{"apiVersion", kind.ApiVersion()}, {"kind", kind.kind}, {"name", api::Name(obj)},
                       {"uid", api::Uid(obj)}, {"controller", true}, {"blockOwnerDeletion", true}};
  return api::Object{{"apiVersion", kKueueApiVersion},
                     {"kind", "Workload"},
                     {"metadata",
                      {{"name", WorkloadName(api::Name(obj), kind)},
                       {"namespace", api::Namespace(obj)},
                       {"labels", {{kJobUidLabel, api::Uid(obj)}}},
                       {"ownerReferences", api::Object::array({owner})}}},
                     {"spec", spec}};
}

Status JobReconciler::Reconcile(const std::string& key) {
  client::ObjectPtr cached = jobs_->GetIndexer().Get(key);
  if (!cached) return Status::Ok();  // the Workload goes with its owner (garbage collection)
  std::unique_ptr<GenericJob> job = integration_->Wrap(*cached);
  const api::Object& obj = job->object();
  const Time now = clock_.Now();

  // 1. Only the label makes a job managed (or manageJobsWithoutQueueName).
  const bool unmanaged_namespace = !api::KueueManagesNamespace(api::Namespace(obj));
  if (Label(obj, kQueueNameLabel).empty() && (!options_.manage_jobs_without_queue_name || unmanaged_namespace)) {
    if (auto ann = Annotation(obj, kQueueNameLabel); ann && !ann->empty()) {
      bool first;
      {
        std::lock_guard<std::mutex> lock(mu_);
        first = warned_.insert(api::Uid(obj)).second;
      }
      if (first) {
        recorder_.Event(obj, kEventTypeWarning, "QueueNameAnnotationIgnored",
                        fmt::format("the job is not managed by Kueue: \"{}\" is set as an annotation; only the "
                                    "label kueue.x-k8s.io/queue-name selects a LocalQueue (label it \"{}\")",
                                    kQueueNameLabel, *ann));
      }
    }
    return Status::Ok();
  }

  // 2. The Workload.
  client::ObjectPtr wl_ptr = FindWorkload(cache_, obj);
  if (!wl_ptr) {
    if (job->Finished()) return Status::Ok();
    if (!job->IsSuspended()) {
      job->Suspend();
      BERTH_RETURN_IF_ERROR(UpdateJob(*job));
    }
    // A job whose podSets cannot be derived yet (a TrainJob whose runtime is missing)
    // waits suspended without a Workload.
    if (job->PodSets().empty()) return Status::Ok();
    auto wl = NewWorkload(*job);
    if (!wl.ok()) {
      recorder_.Event(obj, kEventTypeWarning, "ErrorCreatingWorkload", wl.status().message());
      return wl.status();
    }
    auto created = client_.Create(kWorkloads.Namespace(api::Namespace(obj)), wl.value());
    if (!created.ok() && created.status().code() != Code::kAlreadyExists) return created.status();
    if (created.ok()) {
      recorder_.Event(obj, kEventTypeNormal, "CreatedWorkload",
                      "Created Workload: " + api::Namespace(obj) + "/" + api::Name(created.value()));
    }
    return Status::Ok();
  }
  api::Object wl = *wl_ptr;

  // 3. Finished.
  if (auto fin = job->Finished()) {
    if (SetFinished(&wl, fin->succeeded, fin->message, now)) {
      BERTH_RETURN_IF_ERROR(UpdateWorkloadStatus(wl));
      // Kueue records FinishedWorkload on the job; berth also records it on the
      // Workload, so `kubectl describe workload` tells the whole story.
      recorder_.Event(wl, kEventTypeNormal, "Finished", fin->message);
      recorder_.Event(obj, kEventTypeNormal, "FinishedWorkload",
                      "Workload '" + api::Namespace(wl) + "/" + api::Name(wl) + "' is declared finished");
      return Status::Ok();
    }
    return Status::Ok();
  }

  // waitForPodsReady: the PodsReady condition follows the job's pods.
  if (options_.wait_for_pods_ready) {
    const Condition ready = PodsReadyCondition(wl, job->PodsReady());
    const api::Object* cur = FindCondition(wl, "PodsReady");
    if (!cur || cur->value("status", "") != ready.status || cur->value("reason", "") != ready.reason) {
      SetCondition(&wl, ready, now);
      return UpdateWorkloadStatus(wl);
    }
  }

  const bool holds_quota = IsConditionTrue(wl, "QuotaReserved");
  const bool evicted = IsConditionTrue(wl, "Evicted");
  const api::Object& pod_sets = wl["spec"]["podSets"];

  // 4. Evicted: stop the job, then release the quota once its pods are gone.
  if (holds_quota && evicted) {
    if (!job->IsSuspended()) {
      std::vector<PodSetInfo> original;
      for (const api::Object& ps : pod_sets) {
        PodSetInfo info;
        info.name = ps.value("name", "main");
        info.count = ps.value("count", 1);
        const api::Object& spec = PodSpecOf(ps.value("template", api::Object::object()));
        if (spec.contains("nodeSelector")) info.node_selector = spec["nodeSelector"].get<std::map<std::string, std::string>>();
        if (spec.contains("tolerations")) info.tolerations = spec["tolerations"].get<std::vector<api::Object>>();
        original.push_back(std::move(info));
      }
      job->Suspend();
      job->RestorePodSetsInfo(original);
      BERTH_RETURN_IF_ERROR(UpdateJob(*job));
      const api::Object* ev = FindCondition(wl, "Evicted");
      recorder_.Event(obj, kEventTypeNormal, "Stopped", ev ? ev->value("message", "") : "evicted");
      return Status::Ok();
    }
    if (job->IsActive()) return Status::Ok();  // pods still terminating: keep the quota
    if (ReleaseQuota(&wl, now)) {
      BERTH_RETURN_IF_ERROR(UpdateWorkloadStatus(wl));
      // Kueue records no Event here. berth adds one only when the workload
      // really goes back to its queue now (Requeued=True: Preempted,
      // NodeFailures); a deactivated one, or one waiting out its PodsReady
      // backoff (Requeued=False), is not requeued and gets none.
      if (IsConditionTrue(wl, "Requeued")) {
        recorder_.Event(wl, kEventTypeNormal, "Requeued",
                        "Every pod of the evicted workload has terminated: quota released, workload requeued (" +
                            ConditionField(wl, "Requeued", "reason") + ")");
      }
      return Status::Ok();
    }
    return Status::Ok();
  }

  // 5. Admitted: start the job with the flavors injected.
  if (holds_quota && IsConditionTrue(wl, "Admitted")) {
    if (!job->IsSuspended()) return Status::Ok();
    std::vector<PodSetInfo> infos;
    const api::Object& psas = wl["status"]["admission"]["podSetAssignments"];
    for (const api::Object& psa : psas) {
      PodSetInfo info;
      info.name = psa.value("name", "main");
      info.count = psa.value("count", 0);
      std::set<std::string> flavor_names;
      if (psa.contains("flavors")) {
        for (auto it = psa["flavors"].begin(); it != psa["flavors"].end(); ++it) flavor_names.insert(it.value());
      }
      for (const std::string& f : flavor_names) {
        client::ObjectPtr rf = cache_.flavors().GetIndexer().Get(f);
        if (!rf || !rf->contains("spec")) continue;
        const api::Object& spec = (*rf)["spec"];
        if (spec.contains("nodeLabels")) {
          for (auto it = spec["nodeLabels"].begin(); it != spec["nodeLabels"].end(); ++it) {
            info.node_selector[it.key()] = it.value();
          }
        }
        if (spec.contains("tolerations")) {
          for (const api::Object& t : spec["tolerations"]) info.tolerations.push_back(t);
        }
      }
      infos.push_back(std::move(info));
    }
    BERTH_RETURN_IF_ERROR(job->RunWithPodSetsInfo(infos));
    BERTH_RETURN_IF_ERROR(UpdateJob(*job));
    recorder_.Event(obj, kEventTypeNormal, "Started",
                    "Admitted by clusterQueue " + wl["status"]["admission"].value("clusterQueue", ""));
    return Status::Ok();
  }

  // 6. Not admitted: the job must not run.
  if (!job->IsSuspended()) {
    job->Suspend();
    BERTH_RETURN_IF_ERROR(UpdateJob(*job));
    return Status::Ok();
  }

  // 7. A pending workload follows a switch of WorkloadPriorityClass.
  if (!holds_quota) {
    const std::string wpc = Label(obj, kPriorityClassLabel);
    const api::Object& spec = wl["spec"];
    const std::string current = spec.contains("priorityClassRef") ? spec["priorityClassRef"].value("name", "") : "";
    if (!wpc.empty() && wpc != current) {
      auto prio = ResolvePriority(*job);
      if (!prio.ok()) return prio.status();
      api::Object updated = wl;
      updated["spec"]["priority"] = prio.value().first;
      updated["spec"]["priorityClassRef"] = prio.value().second;
      auto res = client_.Update(kWorkloads.Namespace(api::Namespace(wl)), updated);
      return res.status();
    }
  }
  return Status::Ok();
}

}  // namespace berth::controllers::kueue
