package dev.kubefake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.ExecListener;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * fabric8 kubernetes-client against kubefake, with its defaults: CRUD, server-side apply, a
 * WebSocket watch, exec over WebSocket, an informer, a CRD.
 */
class Fabric8Test {
  static final String NS = "java";
  static Kubefake server;
  static KubernetesClient client;

  @BeforeAll
  static void start() throws Exception {
    String crds = System.getenv("KUBEFAKE_CRDS");
    server = crds == null ? Kubefake.start() : Kubefake.start("--crds", crds);
    client = server.client();
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS)
        .endMetadata().build()).create();
  }

  @AfterAll
  static void stop() throws Exception {
    client.close();
    server.close();
  }

  static ConfigMap configMap(String name, Map<String, String> data) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(NS)
        .addToLabels("app", "java").endMetadata().withData(data).build();
  }

  static int code(Runnable call) {
    return assertThrows(KubernetesClientException.class, call::run).getCode();
  }

  @Test
  void crud() {
    var configMaps = client.configMaps().inNamespace(NS);
    ConfigMap created = configMaps.resource(configMap("cm", Map.of("a", "1"))).create();
    assertNotEquals(null, created.getMetadata().getUid());
    assertEquals(409, code(() -> configMaps.resource(configMap("cm", Map.of())).create()));
    assertEquals(List.of("cm"), configMaps.withLabel("app", "java").list().getItems().stream()
        .map(cm -> cm.getMetadata().getName()).filter("cm"::equals).toList());
    ConfigMap edited = configMaps.withName("cm").edit(cm -> {
      cm.getData().put("a", "2");
      return cm;
    });
    assertEquals("2", edited.getData().get("a"));
    assertNotEquals(created.getMetadata().getResourceVersion(),
        edited.getMetadata().getResourceVersion());
    created.getData().put("a", "stale");
    assertEquals(409, code(() -> configMaps.resource(created).update()));
    assertEquals(Map.of("a", "2"), configMaps.withName("cm").get().getData());
    configMaps.withName("cm").delete();
    assertNull(configMaps.withName("cm").get());
  }

  @Test
  void serverSideApply() {
    var configMaps = client.configMaps().inNamespace(NS);
    configMaps.resource(configMap("applied", Map.of("owner", "first")))
        .fieldManager("first").serverSideApply();
    ConfigMap second = configMap("applied", Map.of("owner", "second"));
    assertEquals(409, code(() -> configMaps.resource(second).fieldManager("second")
        .serverSideApply()));
    ConfigMap forced = configMaps.resource(second).fieldManager("second").forceConflicts()
        .serverSideApply();
    assertEquals("second", forced.getData().get("owner"));
    List<String> managers = forced.getMetadata().getManagedFields().stream()
        .map(ManagedFieldsEntry::getManager).toList();
    assertTrue(managers.contains("second"), managers.toString());
  }

  /** fabric8's default watch is a WebSocket watch: one event per message, no fallback to HTTP. */
  @Test
  void websocketWatch() throws Exception {
    var configMaps = client.configMaps().inNamespace(NS);
    List<String> seen = new CopyOnWriteArrayList<>();
    CountDownLatch added = new CountDownLatch(2);
    Watch watch = configMaps.watch(new Watcher<>() {
      @Override
      public void eventReceived(Action action, ConfigMap cm) {
        // A watch from no resourceVersion starts with the namespace's current ConfigMaps.
        if (cm.getMetadata().getName().startsWith("ws-")) {
          seen.add(action + " " + cm.getMetadata().getName());
          added.countDown();
        }
      }

      @Override
      public void onClose(WatcherException cause) {
        seen.add("closed " + cause);
      }
    });
    try {
      assertEquals("WatchConnectionManager", watch.getClass().getSimpleName());
      configMaps.resource(configMap("ws-1", Map.of())).create();
      configMaps.resource(configMap("ws-2", Map.of())).create();
      assertTrue(added.await(10, TimeUnit.SECONDS), "events: " + seen);
      assertEquals(List.of("ADDED ws-1", "ADDED ws-2"), seen);
    } finally {
      watch.close();
    }
  }

  /**
   * exec over WebSocket (v4.channel.k8s.io) on a pod with a node: negotiated as the kubelet
   * negotiates it, then ended with the error on the error channel (kubefake runs no containers),
   * never a hang.
   */
  @Test
  void execEndsWithTheError() throws Exception {
    var pods = client.pods().inNamespace(NS);
    pods.resource(new PodBuilder().withNewMetadata().withName("exec-me").endMetadata()
        .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("busybox")
        .endContainer().endSpec().build()).create();
    List<String> statuses = new CopyOnWriteArrayList<>();
    try (ExecWatch exec = pods.withName("exec-me").redirectingOutput()
        .usingListener(new ExecListener() {
          @Override
          public void onExit(int code, Status status) {
            statuses.add(status.getReason() + ": " + status.getMessage());
          }

          @Override
          public void onClose(int code, String reason) {}
        }).exec("echo", "hi")) {
      assertEquals(-1, exec.exitCode().get(10, TimeUnit.SECONDS));
    }
    assertEquals(List.of("BadRequest: kubefake runs no containers: container \"c\" of pod "
        + "\"exec-me\" cannot be reached"), statuses);
  }

  @Test
  void informer() throws Exception {
    var configMaps = client.configMaps().inNamespace(NS);
    configMaps.resource(configMap("before", Map.of())).create();
    List<String> events = new CopyOnWriteArrayList<>();
    CountDownLatch deleted = new CountDownLatch(1);
    SharedIndexInformer<ConfigMap> informer = configMaps.inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap cm) {
        events.add("add " + cm.getMetadata().getName());
      }

      @Override
      public void onUpdate(ConfigMap old, ConfigMap cm) {
        events.add("update " + cm.getMetadata().getName());
      }

      @Override
      public void onDelete(ConfigMap cm, boolean unknownFinalState) {
        events.add("delete " + cm.getMetadata().getName());
        if (cm.getMetadata().getName().equals("after")) {
          deleted.countDown();
        }
      }
    }, 0);
    try {
      configMaps.resource(configMap("after", Map.of())).create();
      configMaps.withName("after").edit(cm -> {
        cm.setData(Map.of("v", "2"));
        return cm;
      });
      configMaps.withName("after").delete();
      assertTrue(deleted.await(10, TimeUnit.SECONDS), "no delete event: " + events);
    } finally {
      informer.close();
    }
    assertTrue(events.contains("add before"), events.toString());
    assertEquals(List.of("add after", "update after", "delete after"),
        events.stream().filter(e -> e.endsWith(" after")).toList());
  }

  @Test
  void customResource() {
    if (System.getenv("KUBEFAKE_CRDS") == null) {
      return;
    }
    var context = new ResourceDefinitionContext.Builder().withGroup("stable.example.com")
        .withVersion("v1").withKind("CronTab").withPlural("crontabs").withNamespaced(true).build();
    var crontabs = client.genericKubernetesResources(context).inNamespace(NS);
    GenericKubernetesResource tab = new GenericKubernetesResourceBuilder()
        .withApiVersion("stable.example.com/v1").withKind("CronTab")
        .withNewMetadata().withName("tab").endMetadata()
        .addToAdditionalProperties("spec", Map.of("cronSpec", "* * * * */5", "replicas", 1))
        .build();
    crontabs.resource(tab).create();
    assertEquals("* * * * */5",
        ((Map<?, ?>) crontabs.withName("tab").get().getAdditionalProperties().get("spec"))
            .get("cronSpec"));
    tab.getMetadata().setName("bad");
    tab.setAdditionalProperty("spec", Map.of("replicas", "many"));
    assertEquals(422, code(() -> crontabs.resource(tab).create()));
  }
}
