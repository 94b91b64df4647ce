#include "controllers/kueue/job_reconciler.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <set>

#include "api/conditions.h"
#include "api/kueue_job_webhook.h"
#include "api/priority_admission.h"
#include "api/registry.h"
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

// The pod templates' original nodeSelector and tolerations, as the Workload recorded them
// (Kueue's GetPodSetsInfoFromWorkload), to restore a stopped job with.
std::vector<PodSetInfo> OriginalPodSetsInfo(const api::Object& wl) {
  std::vector<PodSetInfo> original;
  for (const api::Object& ps : ArrayAt(ObjectAt(wl, "spec"), "podSets")) {
    PodSetInfo info;
    info.name = ps.value("name", "main");
    info.count = ps.value("count", 1);
    const api::Object& spec = PodSpecOf(ps.value("template", api::Object::object()));
    if (spec.contains("nodeSelector") && spec["nodeSelector"].is_object()) {
      for (const auto& [key, value] : spec["nodeSelector"].items()) {
        if (value.is_string()) info.node_selector[key] = value.get<std::string>();
      }
    }
    if (spec.contains("tolerations") && spec["tolerations"].is_array()) {
      info.tolerations = spec["tolerations"].get<std::vector<api::Object>>();
    }
    original.push_back(std::move(info));
  }
  return original;
}

// Kueue's equality.ComparePodSets: the count, then the pod spec's initContainers and
// containers (requests, images, commands: what the quota and the pods are made of), and its
// tolerations unless ignored.
bool SamePodSet(const PodSet& job_set, const api::Object& template_spec, int64_t count, bool ignore_tolerations) {
  if (job_set.count != count) return false;
  const api::Object& a = PodSpecOf(job_set.template_spec);
  const api::Object& b = PodSpecOf(template_spec);
  for (std::string_view key : {"initContainers", "containers"}) {
    if (Field(a, key) != Field(b, key)) return false;
  }
  return ignore_tolerations || Field(a, "tolerations") == Field(b, "tolerations");
}

// Workload podSets as the API server stores them: pruned and defaulted by the Workload
// schema. Both sides of the comparison go through it: a kind may derive templates its own
// schema never defaulted (the PyTorchJob port without `protocol: TCP`), and a Workload
// written without the server (tests' fake client) has no defaults.
api::Object PodSetsAsStored(api::Object pod_sets) {
  const api::Schema* schema = api::Registry::Default().SchemaFor({"kueue.x-k8s.io", "v1beta2", "Workload"});
  if (schema == nullptr) return pod_sets;
  api::Object wl = {
      {"apiVersion", kKueueApiVersion}, {"kind", "Workload"}, {"spec", {{"podSets", std::move(pod_sets)}}}};
  schema->Prune(&wl);
  schema->Default(&wl);
  return ArrayAt(ObjectAt(wl, "spec"), "podSets");
}

}  // namespace

bool EquivalentToWorkload(const GenericJob& job, const api::Object& wl) {
  const api::Object& max = NestedField(wl, {"spec", "maximumExecutionTimeSeconds"});
  const std::optional<int32_t> wl_max =
      max.is_number_integer() ? std::optional<int32_t>(max.get<int32_t>()) : std::nullopt;
  if (wl_max != api::MaxExecTimeSecondsFromLabel(job.object())) return false;
  std::vector<PodSet> job_sets = job.PodSets();
  api::Object derived = api::Object::array();
  for (const PodSet& ps : job_sets) derived.push_back(ps.ToWorkloadPodSet());
  derived = PodSetsAsStored(std::move(derived));
  for (size_t i = 0; i < job_sets.size() && i < derived.size(); ++i) {
    job_sets[i].template_spec = Field(derived[i], "template");
  }
  const api::Object wl_sets = PodSetsAsStored(ArrayAt(ObjectAt(wl, "spec"), "podSets"));
  if (wl_sets.size() != job_sets.size()) return false;
  const api::Object& admission = NestedField(wl, {"status", "admission"});
  const bool reserved = IsConditionTrue(wl, "QuotaReserved") && admission.is_object();
  // running: the counts the admission assigned (Kueue's expectedRunningPodSets).
  auto matches = [&](bool running) {
    for (size_t i = 0; i < job_sets.size(); ++i) {
      const api::Object& ps = wl_sets[i];
      int64_t count = IntAt(ps, "count", 1);
      if (running) {
        const api::Object* psa = FindNamed(ArrayAt(admission, "podSetAssignments"), StringAt(ps, "name"));
        if (psa != nullptr) count = IntAt(*psa, "count", count);
      }
      if (!SamePodSet(job_sets[i], Field(ps, "template"), count, reserved)) return false;
    }
    return true;
  };
  if (!reserved) return matches(false);
  // A suspended job is also compared with the Workload's own podSets (Kueue: "do the check
  // against the non-running info").
  return matches(true) || (job.IsSuspended() && matches(false));
}

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

StatusOr<bool> JobReconciler::StopJob(std::unique_ptr<GenericJob>* job, const api::Object& wl,
                                      const std::string& event_message) {
  const auto ref = integration_->Resource().Namespace(api::Namespace((*job)->object()));
  bool changed = false;
  if (!(*job)->IsSuspended()) {
    (*job)->Suspend();
    BERTH_ASSIGN_OR_RETURN(api::Object updated, client_.Update(ref, (*job)->object()));
    *job = integration_->Wrap(std::move(updated));
    if (!event_message.empty()) recorder_.Event((*job)->object(), kEventTypeNormal, "Stopped", event_message);
    changed = true;
  }
  if ((*job)->ResetStartTime()) {
    BERTH_ASSIGN_OR_RETURN(api::Object updated, client_.UpdateStatus(ref, (*job)->object()));
    *job = integration_->Wrap(std::move(updated));
    changed = true;
  }
  if ((*job)->RestorePodSetsInfo(OriginalPodSetsInfo(wl))) {
    BERTH_ASSIGN_OR_RETURN(api::Object updated, client_.Update(ref, (*job)->object()));
    *job = integration_->Wrap(std::move(updated));
    changed = true;
  }
  return changed;
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
  api::Object spec = {{"queueName", Label(obj, kQueueNameLabel)},
                      {"podSets", pod_sets},
                      {"priority", priority.first},
                      {"active", true}};
  if (!priority.second.is_null()) spec["priorityClassRef"] = priority.second;
  if (auto max = api::MaxExecTimeSecondsFromLabel(obj)) spec["maximumExecutionTimeSeconds"] = *max;
  api::Object owner = {{"apiVersion", kind.ApiVersion()},
                       {"kind", kind.kind},
                       {"name", api::Name(obj)},
                       {"uid", api::Uid(obj)},
                       {"controller", true},
                       {"blockOwnerDeletion", true}};
  return api::Object{{"apiVersion", kKueueApiVersion},
                     {"kind", "Workload"},
                     {"metadata",
                      {{"name", WorkloadName(api::Name(obj), kind)},
                       {"namespace", api::Namespace(obj)},
                       {"labels", {{kJobUidLabel, api::Uid(obj)}}},
                       {"ownerReferences", api::Object::array({owner})}}},
                     {"spec", spec}};
}

size_t JobReconciler::WarnedJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  return warned_.size();
}

Status JobReconciler::Reconcile(const std::string& key) {
  client::ObjectPtr cached = jobs_->GetIndexer().Get(key);
  if (!cached) {  // the Workload goes with its owner (garbage collection)
    std::lock_guard<std::mutex> lock(mu_);
    warned_.erase(key);
    return Status::Ok();
  }
  std::unique_ptr<GenericJob> job = integration_->Wrap(*cached);
  const api::Object& obj = *cached;  // the job as read (StopJob re-wraps `job` after each write)
  const Time now = clock_.Now();

  // 1. Only the label makes a job managed (or manageJobsWithoutQueueName).
  const bool unmanaged_namespace = !api::KueueManagesNamespace(api::Namespace(obj));
  if (Label(obj, kQueueNameLabel).empty() && (!options_.manage_jobs_without_queue_name || unmanaged_namespace)) {
    if (auto ann = Annotation(obj, kQueueNameLabel); ann && !ann->empty()) {
      bool first;
      {
        std::lock_guard<std::mutex> lock(mu_);
        std::string& warned = warned_[key];
        first = warned != api::Uid(obj);
        warned = api::Uid(obj);
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

  // A Workload that no longer matches its job (Kueue's ensureOneWorkload): stop the job,
  // and once its pods are gone delete the Workload; the next reconcile creates one that
  // queues again.
  if (!EquivalentToWorkload(*job, wl)) {
    BERTH_ASSIGN_OR_RETURN(
        bool stopping,
        StopJob(&job, wl, "No matching Workload; restoring pod templates according to existent Workload"));
    if (stopping || job->IsActive()) return Status::Ok();  // the quota stays held until the pods are gone
    client::DeleteOptions options;
    options.preconditions.uid = api::Uid(wl);
    Status deleted = client_.Delete(kWorkloads.Namespace(api::Namespace(wl)), api::Name(wl), options);
    if (!deleted.ok()) return deleted.code() == Code::kNotFound ? Status::Ok() : deleted;
    recorder_.Event(job->object(), kEventTypeNormal, "DeletedWorkload",
                    "Deleted not matching Workload: " + api::Namespace(wl) + "/" + api::Name(wl));
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

  // 4. Evicted: stop the job, then release the quota once its pods are gone.
  if (holds_quota && evicted) {
    const api::Object* ev = FindCondition(wl, "Evicted");
    BERTH_ASSIGN_OR_RETURN(bool stopping, StopJob(&job, wl, ev ? ev->value("message", "") : "evicted"));
    if (stopping) return Status::Ok();
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
    // A job stopped before its start time was reset (status.startTime keeps its
    // template's scheduling directives immutable).
    if (job->ResetStartTime()) {
      auto reset = client_.UpdateStatus(integration_->Resource().Namespace(api::Namespace(obj)), job->object());
      if (!reset.ok()) return reset.status();
      job = integration_->Wrap(std::move(reset).value());
    }
    BERTH_RETURN_IF_ERROR(job->RunWithPodSetsInfo(infos));
    BERTH_RETURN_IF_ERROR(UpdateJob(*job));
    recorder_.Event(obj, kEventTypeNormal, "Started",
                    "Admitted by clusterQueue " + wl["status"]["admission"].value("clusterQueue", ""));
    return Status::Ok();
  }

  // 6. Not admitted: the job must not run.
  if (!job->IsSuspended()) return StopJob(&job, wl, "").status();

  // 7. A pending workload follows its job to another LocalQueue (Kueue's
  // "Job changed queues, updating workload": spec.queueName is updated in
  // place, so it keeps its name and creation time) and a switch of
  // WorkloadPriorityClass.
  if (!holds_quota) {
    const std::string queue = Label(obj, kQueueNameLabel);
    if (!queue.empty() && queue != api::NestedString(wl, {"spec", "queueName"})) {
      api::Object updated = wl;
      updated["spec"]["queueName"] = queue;
      return client_.Update(kWorkloads.Namespace(api::Namespace(wl)), updated).status();
    }
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
