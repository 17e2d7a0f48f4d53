package v1

import (
	"fmt"

	v2 "example.kubefake.dev/widgets/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// ConvertTo converts this Widget to the hub (v2): size becomes replicas.
func (src *Widget) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v2.Widget)
	if !ok {
		return fmt.Errorf("unexpected hub type %T", dstRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Replicas = src.Spec.Size
	dst.Spec.Message = src.Spec.Message
	dst.Status = v2.WidgetStatus(src.Status)
	return nil
}

// ConvertFrom converts the hub (v2) to this version: replicas becomes size.
func (dst *Widget) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v2.Widget)
	if !ok {
		return fmt.Errorf("unexpected hub type %T", srcRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Size = src.Spec.Replicas
	dst.Spec.Message = src.Spec.Message
	dst.Status = WidgetStatus(src.Status)
	return nil
}
