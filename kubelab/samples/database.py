"""Notebook 08's second operator: a Database gets a StatefulSet, a Service and a backup CronJob,
as seed article 001 §11 describes a database operator ("when a Database appears, create a
StatefulSet, a Service and a backup cron").

    apiVersion: db.kubelab.dev/v1
    kind: Database
    metadata: {name: orders}
    spec: {replicas: 2, storage: 1Gi, backupSchedule: "0 2 * * *"}

Its reconcile (a kubelab.client.operator Reconciler, in controller-runtime's
CreateOrUpdate shape), for one Database:
1. gone from the cache: nothing to do (the garbage collector deletes what it owns);
2. the headless Service `<name>` (clusterIP None, port 5432): the StatefulSet's governing
   Service, which gives each replica its DNS name `<name>-0.<name>`;
3. the StatefulSet `<name>` (serviceName `<name>`, a postgres container, a volumeClaimTemplate
   `data` of spec.storage): ordered pods `<name>-0`, `<name>-1`, ... each with its own claim;
4. the CronJob `<name>-backup` on spec.backupSchedule (concurrencyPolicy Forbid: never two
   backups at once);
5. status: readyReplicas from the StatefulSet, a Ready condition with observedGeneration.
Each child carries a controller reference to the Database, so a watch on it wakes the
Database's reconcile and deleting the Database deletes all three. A child that drifts from
the spec (replicas, image, schedule) is updated; one that matches is left alone.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.component import ComponentContext
from kubelab.client.operator import (
    Operator,
    Reconciler,
    Request,
    Result,
    set_controller_reference,
    set_status_condition,
)

__all__ = ["DATABASE_CRD", "GROUP", "DatabaseReconciler", "database", "database_operator"]

GROUP = "db.kubelab.dev"
INSTANCE = "app.kubernetes.io/instance"
PORT = 5432

Path = tuple[str | int, ...]
JOB_IMAGE: Path = ("spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "image")


def _get(obj: Any, path: Path) -> Any:
    for key in path:
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def _set(obj: Any, path: Path, value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value

DATABASE_CRD: Object = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"databases.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "databases", "singular": "database", "kind": "Database",
                       "shortNames": ["db"]},
             "versions": [{
                 "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                 "additionalPrinterColumns": [
                     {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                     {"name": "Ready", "type": "integer", "jsonPath": ".status.readyReplicas"},
                     {"name": "Backup", "type": "string", "jsonPath": ".spec.backupSchedule"},
                     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                     "spec": {"type": "object", "properties": {
                         "image": {"type": "string", "default": "postgres:16"},
                         "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
                         "storage": {"type": "string", "default": "1Gi"},
                         "backupSchedule": {"type": "string", "default": "0 2 * * *",
                                            "description": "When the backup CronJob runs (cron)."}}},
                     "status": {"type": "object", "properties": {
                         "readyReplicas": {"type": "integer"},
                         "observedGeneration": {"type": "integer"},
                         "conditions": {"type": "array", "items": {
                             "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}},
             }]}}


def database(name: str, replicas: int = 1, namespace: str = "default", **spec: Any) -> Object:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Database",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, **spec}}


class DatabaseReconciler(Reconciler):
    def reconcile(self, request: Request) -> Result | None:
        db = self.cache.get("databases", request.name, request.namespace)
        if db is None:
            return None  # deleted: the garbage collector removes its children
        if db["metadata"].get("deletionTimestamp"):
            return None
        self.create_or_update("services", self.service_for(db), ("spec", "selector"))
        sts = self.create_or_update("statefulsets", self.stateful_set_for(db), ("spec", "replicas"),
                                    ("spec", "template", "spec", "containers", 0, "image"))
        self.create_or_update("cronjobs", self.backup_cron_job_for(db), ("spec", "schedule"),
                              JOB_IMAGE)
        return self.write_status(db, sts)

    def create_or_update(self, resource: str, want: Object, *fields: Path) -> Object:
        """controllerutil.CreateOrUpdate: create what is missing; copy the fields this operator
        owns onto what drifted; send nothing when they already match. Only those fields are
        compared: the API server defaults many others (imagePullPolicy, ...), which is no drift."""
        meta = want["metadata"]
        have = self.cache.get(resource, meta["name"], meta["namespace"])
        if have is None:
            try:
                return self.client.create(want)
            except ApiError as err:
                if err.code != 409:  # AlreadyExists: the cache is behind; the event will come
                    raise
                return want
        drifted = [path for path in fields if _get(have, path) != _get(want, path)]
        if not drifted:
            return have
        updated = deep_copy(have)
        for path in drifted:
            _set(updated, path, _get(want, path))
        return self.client.update(updated)

    def _child_meta(self, db: Object, name: str) -> Object:
        return {"name": name, "namespace": db["metadata"]["namespace"],
                "labels": {INSTANCE: db["metadata"]["name"],
                           "app.kubernetes.io/managed-by": "database-operator"}}

    def service_for(self, db: Object) -> Object:
        name = db["metadata"]["name"]
        svc: Object = {"apiVersion": "v1", "kind": "Service", "metadata": self._child_meta(db, name),
                       "spec": {"clusterIP": "None", "selector": {INSTANCE: name},
                                "ports": [{"name": "postgres", "port": PORT, "targetPort": PORT,
                                           "protocol": "TCP"}]}}
        set_controller_reference(db, svc)
        return svc

    def stateful_set_for(self, db: Object) -> Object:
        name, spec = db["metadata"]["name"], db.get("spec") or {}
        sts: Object = {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": self._child_meta(db, name),
            "spec": {
                "serviceName": name, "replicas": int(spec.get("replicas") or 1),
                "selector": {"matchLabels": {INSTANCE: name}},
                "template": {"metadata": {"labels": {INSTANCE: name}},
                             "spec": {"containers": [{
                                 "name": "postgres", "image": spec.get("image") or "postgres:16",
                                 "ports": [{"name": "postgres", "containerPort": PORT, "protocol": "TCP"}],
                                 # a sample: no password. A real operator would make a Secret and
                                 # pass POSTGRES_PASSWORD from it (env valueFrom secretKeyRef).
                                 "env": [{"name": "POSTGRES_HOST_AUTH_METHOD", "value": "trust"}],
                                 "volumeMounts": [{"name": "data",
                                                   "mountPath": "/var/lib/postgresql/data"}]}]}},
                "volumeClaimTemplates": [{
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                             "resources": {"requests": {"storage": spec.get("storage") or "1Gi"}}}}]}}
        set_controller_reference(db, sts)
        return sts

    def backup_cron_job_for(self, db: Object) -> Object:
        name, spec = db["metadata"]["name"], db.get("spec") or {}
        cj: Object = {
            "apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": self._child_meta(db, f"{name}-backup"),
            "spec": {
                "schedule": spec.get("backupSchedule") or "0 2 * * *", "concurrencyPolicy": "Forbid",
                "jobTemplate": {"spec": {"backoffLimit": 2, "template": {
                    "metadata": {"annotations": {"kubelab.dev/behavior": "exit=20,code=0"}},
                    "spec": {"restartPolicy": "OnFailure", "containers": [{
                        "name": "backup", "image": spec.get("image") or "postgres:16",
                        "args": ["pg_dumpall", "-h", f"{name}-0.{name}", "-f", "/backup/all.sql"]}]}}}}}}
        set_controller_reference(db, cj)
        return cj

    def write_status(self, db: Object, sts: Object) -> Result | None:
        """Write status only if it differs: a reconcile with nothing to do sends nothing."""
        want = int((db.get("spec") or {}).get("replicas") or 1)
        ready = int((sts.get("status") or {}).get("readyReplicas") or 0)
        old = db.get("status") or {}
        generation = db["metadata"].get("generation", 1)
        conditions = deep_copy({"c": old.get("conditions") or []})["c"]
        set_status_condition(conditions, {
            "type": "Ready", "status": "True" if ready >= want else "False",
            "reason": "AllReplicasReady" if ready >= want else "ReplicasNotReady",
            "message": f"{ready} of {want} replicas ready", "observedGeneration": generation},
            self.clock.now)
        new = {**old, "readyReplicas": ready, "observedGeneration": generation, "conditions": conditions}
        if new != old:
            updated = deep_copy(db)
            updated["status"] = new
            self.client.update_status(updated)
        return None


def database_operator(ctx: ComponentContext) -> Operator:
    """The component, for c.add_component("database-operator", database_operator)."""
    return Operator(ctx, DatabaseReconciler(), for_resource="databases",
                    owns=["statefulsets", "services", "cronjobs"])
