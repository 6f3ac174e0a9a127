"""The protobuf field tables of batch/v1.

Its kinds: Job and CronJob.

Transcribed from k8s.io/api batch/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "CronJob": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "CronJobSpec", ""),
                3: ("status", "CronJobStatus", "")},
    "CronJobSpec": {1: ("schedule", "str", ""), 2: ("startingDeadlineSeconds", "int", "ptr"),
                    3: ("concurrencyPolicy", "str", ""), 4: ("suspend", "bool", "ptr"),
                    5: ("jobTemplate", "JobTemplateSpec", ""),
                    6: ("successfulJobsHistoryLimit", "int", "ptr"),
                    7: ("failedJobsHistoryLimit", "int", "ptr"), 8: ("timeZone", "str", "ptr")},
    "CronJobStatus": {1: ("active", "ObjectReference", "rep"), 4: ("lastScheduleTime", "time", "ptr"),
                      5: ("lastSuccessfulTime", "time", "ptr")},
    "Job": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "JobSpec", ""), 3: ("status", "JobStatus", "")},
    "JobCondition": {1: ("type", "str", ""), 2: ("status", "str", ""), 3: ("lastProbeTime", "time", ""),
                     4: ("lastTransitionTime", "time", ""), 5: ("reason", "str", ""),
                     6: ("message", "str", "")},
    "JobSpec": {1: ("parallelism", "int", "ptr"), 2: ("completions", "int", "ptr"),
                3: ("activeDeadlineSeconds", "int", "ptr"), 4: ("selector", "LabelSelector", "ptr"),
                5: ("manualSelector", "bool", "ptr"), 6: ("template", "PodTemplateSpec", ""),
                7: ("backoffLimit", "int", "ptr"), 8: ("ttlSecondsAfterFinished", "int", "ptr"),
                9: ("completionMode", "str", "ptr"), 10: ("suspend", "bool", "ptr"),
                11: ("podFailurePolicy", "PodFailurePolicy", "ptr"),
                12: ("backoffLimitPerIndex", "int", "ptr"), 13: ("maxFailedIndexes", "int", "ptr"),
                14: ("podReplacementPolicy", "str", "ptr"), 15: ("managedBy", "str", "ptr"),
                16: ("successPolicy", "SuccessPolicy", "ptr")},
    "JobStatus": {1: ("conditions", "JobCondition", "rep"), 2: ("startTime", "time", "ptr"),
                  3: ("completionTime", "time", "ptr"), 4: ("active", "int", ""),
                  5: ("succeeded", "int", ""), 6: ("failed", "int", ""), 7: ("completedIndexes", "str", ""),
                  8: ("uncountedTerminatedPods", "UncountedTerminatedPods", "ptr"),
                  9: ("ready", "int", "ptr"), 10: ("failedIndexes", "str", "ptr"),
                  11: ("terminating", "int", "ptr")},
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "JobSpec", "")},
    "PodFailurePolicy": {1: ("rules", "PodFailurePolicyRule", "rep")},
    "PodFailurePolicyOnExitCodesRequirement": {1: ("containerName", "str", "ptr"),
                                               2: ("operator", "str", ""), 3: ("values", "int", "rep")},
    "PodFailurePolicyOnPodConditionsPattern": {1: ("type", "str", ""), 2: ("status", "str", "")},
    "PodFailurePolicyRule": {1: ("action", "str", ""),
                             2: ("onExitCodes", "PodFailurePolicyOnExitCodesRequirement", "ptr"),
                             3: ("onPodConditions", "PodFailurePolicyOnPodConditionsPattern", "rep")},
    "SuccessPolicy": {1: ("rules", "SuccessPolicyRule", "rep")},
    "SuccessPolicyRule": {1: ("succeededIndexes", "str", "ptr"), 2: ("succeededCount", "int", "ptr")},
    "UncountedTerminatedPods": {1: ("succeeded", "str", "rep"), 2: ("failed", "str", "rep")},
}
