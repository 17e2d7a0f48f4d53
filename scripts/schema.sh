#!/usr/bin/env bash
# Structural schemas with kubectl: the walkthrough's invalid CronTab is refused with both
# messages, the valid one is created, and unknown fields are pruned (or refused under the
# default --validate=strict).
source "$(dirname "$0")/lib.sh"

start_server --crds fixtures/validation

expect "the invalid CronTab is refused with both messages" 1 \
'The CronTab "my-new-cron-object" is invalid: 
* spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '"'"'^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"'"'
* spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10' \
  -- apply -f fixtures/validation/invalid-crontab.yaml

expect "an unknown field is refused under --validate=strict" 1 \
'Error from server (BadRequest): error when creating "fixtures/validation/unknown-field.yaml": CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.someRandomField"' \
  -- apply -f fixtures/validation/unknown-field.yaml

expect "--validate=false prunes someRandomField" 0 \
'apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  creationTimestamp: "2017-05-31T12:56:35Z"
  generation: 1
  name: my-new-cron-object
  namespace: default
  resourceVersion: "285"
  uid: 9423255b-4600-11e7-af6a-28d2447dc82b
spec:
  cronSpec: '"'"'* * * * */5'"'"'
  image: my-awesome-cron-image' \
  -- create --validate=false -f fixtures/validation/unknown-field.yaml -o yaml

expect "delete it" 0 'crontab.stable.example.com "my-new-cron-object" deleted' \
  -- delete ct my-new-cron-object

expect "the valid CronTab is created" 0 'crontab.stable.example.com/my-new-cron-object created' \
  -- apply -f fixtures/validation/my-crontab.yaml

stop_server
finish
